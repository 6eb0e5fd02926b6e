import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

// A WhatsApp message's status history (wa_message_status_history, written by migration 0042's
// triggers on wa_messages, whoever writes: the wa_sender actor, Meta's status webhooks, the expiry
// of an unconfirmed send), which GET /api/v1/public/message/{id} answers.

const Env = Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive))).pipe(
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

layer(Env, { timeout: 60_000 })("WhatsApp message status history", (it) => {
  const newMessage = Effect.gen(function*() {
    yield* (yield* Storage).awaitReadyFor("30 seconds")
    const sql = yield* SqlClient.SqlClient
    const [user] = yield* sql<{ userId: string }>`INSERT INTO users (email, password_hash) VALUES (${`w${Math.random()}@history.test`}, 'x') RETURNING user_id`
    const [account] = yield* sql<{ accountId: string }>`INSERT INTO accounts (label, plan, owner_user_id) VALUES ('History', 'growth', ${user!.userId}) RETURNING account_id`
    const messageId = crypto.randomUUID()
    yield* sql`INSERT INTO wa_messages (message_id, account_id, phone_number_id, recipient, type, content, status, price)
               VALUES (${messageId}, ${account!.accountId}, '100200300', '+919876541234', 'Text', '{"type":"text","text":{"body":"hi"}}', 'queued', 0)`
    const history = sql<{ status: string; error: unknown }>`
      SELECT status, error FROM wa_message_status_history WHERE message_id = ${messageId} ORDER BY herald_message_status_rank(status), at`
    return { sql, messageId, history }
  })

  it.effect("in order, each status once: queued, accepted (Meta's answer), sent, delivered, read; a repeated status adds nothing", () =>
    Effect.gen(function*() {
      const { sql, messageId, history } = yield* newMessage
      yield* sql`UPDATE wa_messages SET status = 'accepted', upstream_id = 'wamid.1' WHERE message_id = ${messageId}`
      for (const status of ["sent", "delivered", "delivered", "read"]) {
        yield* sql`UPDATE wa_messages SET status = ${status}, sent_at = now(),
                     delivered_at = CASE WHEN ${status} IN ('delivered', 'read') THEN now() END,
                     read_at = CASE WHEN ${status} = 'read' THEN now() END WHERE message_id = ${messageId}`
      }
      expect((yield* history).map((h) => h.status)).toEqual(["queued", "accepted", "sent", "delivered", "read"])
    }))

  it.effect("Meta's delivered before its sent: the history says sent too; Meta's answer after them records no accepted and moves nothing back", () =>
    Effect.gen(function*() {
      const { sql, messageId, history } = yield* newMessage
      yield* sql`UPDATE wa_messages SET status = 'delivered', sent_at = now(), delivered_at = now() WHERE message_id = ${messageId}`
      yield* sql`UPDATE wa_messages SET status = 'accepted', upstream_id = 'wamid.2' WHERE message_id = ${messageId}`
      const [row] = yield* sql<{ status: string }>`SELECT status FROM wa_messages WHERE message_id = ${messageId}`
      expect(row!.status).toBe("delivered")
      expect((yield* history).map((h) => h.status)).toEqual(["queued", "sent", "delivered"])
    }))

  it.effect("an unconfirmed send that expires: unconfirmed then failed, each with its Gateway error record", () =>
    Effect.gen(function*() {
      const { sql, messageId, history } = yield* newMessage
      const lost = { success: false, message: "lost", detail: "d", category: "unknown", retryable: false, message_id: messageId }
      yield* sql`UPDATE wa_messages SET status = 'unconfirmed', error = ${JSON.stringify(lost)}::jsonb WHERE message_id = ${messageId}`
      yield* sql`UPDATE wa_messages SET status = 'failed', failed_at = now(), error = ${JSON.stringify({ ...lost, message: "expired" })}::jsonb
                 WHERE message_id = ${messageId}`
      expect(yield* history).toEqual([
        { status: "queued", error: null },
        { status: "unconfirmed", error: lost },
        { status: "failed", error: { ...lost, message: "expired" } }
      ])
    }))
})
