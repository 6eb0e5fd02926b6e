import { SqlClient } from "@effect/sql"
import { Statement } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execute, parse } from "graphql"
import { costOf, MAX_COST } from "../../src/graphql/cost.ts"
import { makeExecutableSchema } from "../../src/graphql/executableSchema.ts"
import { GraphqlReads } from "../../src/graphql/reads.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { ListCursors } from "../../src/storage/ListCursors.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { graphqlContext } from "../support/graphqlContext.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

// Nested reads load per level with DataLoader (design: a page of 100 conversations with their
// contacts and last messages is a handful of SQL statements, not hundreds). Every statement the
// resolvers run is counted through @effect/sql's statement transformer.

let statements = 0
const Counting = Statement.setTransformer((self) => Effect.sync(() => {
  statements++
  return self
}))

const Env = Layer.mergeAll(GraphqlReads.Default, ListCursors.Default, Counting).pipe(
  Layer.provideMerge(Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive)))),
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

const QUERY = `query ($limit: Int) {
  conversations(page: {limit: $limit}) {
    edges { node { id status contact { id name phone tags } assignee { email } last_message { id direction text status callback_data } } }
    pageInfo { hasNextPage endCursor }
  }
}`

/** 120 customers, each with a conversation on one number, half answered by a send (outbound last message), a third assigned; pages hold every kind from their first rows. */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [user] = yield* sql<{ userId: string }>`INSERT INTO users (email, password_hash) VALUES ('agent@batch.io', 'x') RETURNING user_id::text`
  const [account] = yield* sql<{ accountId: string }>`
    INSERT INTO accounts (label, plan, owner_user_id) VALUES ('batch', 'enterprise', ${user!.userId}) RETURNING account_id::text`
  const accountId = account!.accountId
  yield* sql`INSERT INTO memberships (account_id, user_id, role) VALUES (${accountId}, ${user!.userId}, 'owner')`
  yield* sql`INSERT INTO wa_numbers (phone_number_id, waba_id, account_id, phone, throughput, is_default) VALUES ('100200300', '900', ${accountId}, '+919800000001', 80, true)`
  yield* sql`
    INSERT INTO customers (account_id, phone, name, tags)
    SELECT ${accountId}, '+9198765' || lpad(i::text, 5, '0'), 'Customer ' || i, ARRAY['t' || (i % 3)] FROM generate_series(1, 120) i`
  yield* sql`
    INSERT INTO wa_messages (message_id, account_id, phone_number_id, recipient, type, content, status, price, attempts, callback_data)
    SELECT md5(c.phone)::uuid, ${accountId}, '100200300', c.phone, 'Text', '{"type":"text","object":{"body":"hi"}}', 'delivered', 0, 1, 'cb-' || c.phone
    FROM customers c WHERE c.account_id = ${accountId} AND right(c.phone, 1)::int % 2 = 0`
  yield* sql`
    INSERT INTO conversations (account_id, phone_number_id, customer_id, customer_phone, created_at, assignee_user_id, last_message, last_inbound_at)
    SELECT ${accountId}, '100200300', c.customer_id, c.phone,
      -- In customer order, newest first: any page's first rows hold outbound, inbound and assigned ones.
      now() - right(c.phone, 5)::int * interval '1 millisecond',
      CASE WHEN right(c.phone, 1)::int % 3 = 0 THEN ${user!.userId}::uuid END,
      CASE WHEN right(c.phone, 1)::int % 2 = 0
        THEN jsonb_build_object('direction', 'outbound', 'id', md5(c.phone)::uuid::text, 'type', 'Text', 'text', 'hi', 'at', now())
        ELSE jsonb_build_object('direction', 'inbound', 'id', 'wamid.' || c.phone, 'type', 'Text', 'text', 'hello', 'at', now()) END,
      now()
    FROM customers c WHERE c.account_id = ${accountId}`
  return accountId
})

/** Runs `query` as the route does (the same resolvers, loaders and runner), counting statements. */
const countFor = (accountId: string, limit: number, query = QUERY) =>
  Effect.gen(function*() {
    const context = yield* graphqlContext(accountId, "batch")
    const before = statements
    const result = yield* Effect.promise(async () => execute({ schema: makeExecutableSchema(), document: parse(query), variableValues: { limit }, contextValue: context }))
    return { statements: statements - before, result: result as { data: any; errors?: ReadonlyArray<unknown> } }
  })

layer(Env, { timeout: 60_000 })("GraphQL batching", (it) => {
  it.effect("a page of 100 conversations with contacts, assignees and last messages is as many statements as a page of 5", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReadyFor("30 seconds")
      const accountId = yield* seed
      const small = yield* countFor(accountId, 5)
      const large = yield* countFor(accountId, 100)
      expect(large.result.errors).toBeUndefined()
      const edges = large.result.data.conversations.edges
      expect(edges).toHaveLength(100)
      expect(edges.every((e: any) => e.node.contact.phone.startsWith("+9198765"))).toBe(true)
      expect(edges.filter((e: any) => e.node.assignee?.email === "agent@batch.io").length).toBeGreaterThan(20)
      const outbound = edges.map((e: any) => e.node.last_message).filter((m: any) => m.direction === "OUTBOUND")
      expect(outbound.length).toBeGreaterThan(40)
      expect(outbound.every((m: any) => m.status === "DELIVERED" && m.callback_data.startsWith("cb-"))).toBe(true)
      // The page, its contacts, its assignees, its sends: one statement per level.
      expect(large.statements).toBe(small.statements)
      expect(large.statements).toBe(4)
    }))

  it.effect("499 aliases of wallet { balance } pass the cost rule and read the wallet once", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReadyFor("30 seconds")
      const sql = yield* SqlClient.SqlClient
      const [user] = yield* sql<{ userId: string }>`INSERT INTO users (email, password_hash) VALUES ('alias@batch.io', 'x') RETURNING user_id::text`
      const [account] = yield* sql<{ accountId: string }>`
        INSERT INTO accounts (label, plan, owner_user_id) VALUES ('aliases', 'enterprise', ${user!.userId}) RETURNING account_id::text`
      const query = `{ ${Array.from({ length: 499 }, (_, i) => `w${i}: wallet { balance }`).join(" ")} }`
      const report = costOf(makeExecutableSchema(), parse(query), undefined, undefined)
      expect(report.problems).toEqual([])
      expect(report.cost).toBeLessThanOrEqual(MAX_COST)
      const accountId = account!.accountId
      const { result, statements: ran } = yield* countFor(accountId, 0, query)
      expect(result.errors).toBeUndefined()
      expect(Object.keys(result.data)).toHaveLength(499)
      expect(Object.values(result.data).every((w: any) => w.balance === 0)).toBe(true)
      // The same field with the same arguments resolves once per request.
      expect(ran).toBe(1)
      // Different arguments still resolve apart: two page sizes are two reads.
      const two = yield* countFor(accountId, 0, "{ a: walletTransactions(page: {limit: 1}) { pageInfo { hasNextPage } } b: walletTransactions(page: {limit: 2}) { pageInfo { hasNextPage } } c: walletTransactions(page: {limit: 1}) { pageInfo { hasNextPage } } }")
      expect(two.result.errors).toBeUndefined()
      expect(two.statements).toBe(2)
    }))
})
