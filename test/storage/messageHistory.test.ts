import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

// A message's status history (message_status_history, written by triggers on messages) when the
// gateway's answer comes after its delivery report: the status stays delivered (it never moves
// back), and the history still says the message was sent, at the answer's time.

const Env = Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive))).pipe(
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

layer(Env, { timeout: 60_000 })("message status history", (it) => {
  const newMessage = Effect.gen(function*() {
    yield* (yield* Storage).awaitReadyFor("30 seconds")
    const sql = yield* SqlClient.SqlClient
    const [user] = yield* sql<{ userId: string }>`INSERT INTO users (email, password_hash) VALUES (${`h${Math.random()}@history.test`}, 'x') RETURNING user_id`
    const [account] = yield* sql<{ accountId: string }>`INSERT INTO accounts (label, plan, owner_user_id) VALUES ('History', 'growth', ${user!.userId}) RETURNING account_id`
    const [bot] = yield* sql<{ botId: string }>`INSERT INTO bots (account_id, name, status) VALUES (${account!.accountId}, 'B', 'active') RETURNING bot_id`
    const messageId = crypto.randomUUID()
    yield* sql`INSERT INTO messages (message_id, account_id, bot_id, recipient, content, source, status, price)
               VALUES (${messageId}, ${account!.accountId}, ${bot!.botId}, '+919876541234', '{"type":"text","text":"hi"}', 'api', 'queued', 0.1)`
    const history = sql<{ status: string }>`SELECT status FROM message_status_history WHERE message_id = ${messageId} ORDER BY herald_message_status_rank(status)`
    return { sql, messageId, history }
  })

  it.effect("a send answered after its delivery report: queued, sent, delivered", () =>
    Effect.gen(function*() {
      const { sql, messageId, history } = yield* newMessage
      yield* sql`UPDATE messages SET status = 'delivered', delivered_at = now() WHERE message_id = ${messageId}`
      yield* sql`UPDATE messages SET status = 'sent', sent_at = now() - interval '1 second' WHERE message_id = ${messageId}`
      const [row] = yield* sql<{ status: string }>`SELECT status FROM messages WHERE message_id = ${messageId}`
      expect(row!.status).toBe("delivered")
      expect((yield* history).map((h) => h.status)).toEqual(["queued", "sent", "delivered"])
    }))

  it.effect("in order, each status once; a failed send records no sent", () =>
    Effect.gen(function*() {
      const { sql, messageId, history } = yield* newMessage
      yield* sql`UPDATE messages SET status = 'sent', sent_at = now() WHERE message_id = ${messageId}`
      yield* sql`UPDATE messages SET status = 'delivered', delivered_at = now() WHERE message_id = ${messageId}`
      yield* sql`UPDATE messages SET status = 'read', read_at = now() WHERE message_id = ${messageId}`
      expect((yield* history).map((h) => h.status)).toEqual(["queued", "sent", "delivered", "read"])
      const other = yield* newMessage
      yield* sql`UPDATE messages SET status = 'failed', failed_at = now() WHERE message_id = ${other.messageId}`
      expect((yield* other.history).map((h) => h.status)).toEqual(["queued", "failed"])
    }))
})
