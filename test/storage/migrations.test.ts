import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlLive } from "../../src/storage/Database.ts"
import { prepareDatabase, Storage } from "../../src/storage/Migrations.ts"
import { IsolationLive, IsolationTag, TestConfig } from "../support/isolation.ts"

const Env = Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive))).pipe(
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

layer(Env, { timeout: 60_000 })("storage", (it) => {
  it.effect("creates the database named in DATABASE_URL and migrates it in the background", () =>
    Effect.gen(function*() {
      const storage = yield* Storage
      yield* storage.awaitReadyFor("20 seconds")
      const sql = yield* SqlClient.SqlClient
      const tables = yield* sql<{ tablename: string }>`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`
      expect(tables.map((t) => t.tablename)).toEqual(
        expect.arrayContaining(["accounts", "users", "memberships", "settings", "wallet_transactions", "herald_migrations"])
      )
      const iso = yield* IsolationTag
      const [db] = yield* sql<{ current: string }>`SELECT current_database() AS current`
      expect(db!.current).toBe(iso.database)
    }))

  it.effect("is idempotent and safe when several nodes migrate at once", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const results = yield* Effect.all([prepareDatabase, prepareDatabase, prepareDatabase], { concurrency: "unbounded" })
      for (const r of results) {
        expect(r.created).toBe(false)
        expect(r.applied).toEqual([])
      }
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ id: number }>`SELECT migration_id AS id FROM herald_migrations`
      expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length)
    }))

  it.effect("stores timestamps as timestamptz and domain ids as uuid", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const sql = yield* PgClient.PgClient
      const columns = yield* sql<{ tableName: string; columnName: string; dataType: string }>`
        SELECT table_name, column_name, data_type FROM information_schema.columns
        WHERE table_schema = 'public' AND (column_name LIKE '%\\_at' OR column_name LIKE '%\\_id')
          AND table_name <> 'herald_migrations'`
      // The actor runtime's own ids are not domain ids: outbox rows are numbered, timer ids are
      // chosen by actors, message ids by senders; poison ids are uuids.
      // Webhook delivery ids are `wd_<uuid>` by contract. A list's contacts are numbered in import
      // order (broadcasts read a list in chunks by that number); the upstream ids of inbound messages
      // are the gateway's. WhatsApp's are Meta's: numbers, WABAs, wamids, call and payment ids,
      // the user_id a client gives a customer, a conversion's event_id (the client's) and Meta's dataset id.
      // A broadcast message's staged event is numbered in staging order (its batch keeps that order).
      const runtimeIds = new Set([
        "wa_numbers.phone_number_id", "wa_numbers.waba_id", "conversations.phone_number_id", "wa_templates.waba_id",
        "wa_templates.upstream_id", "wa_template_reviews.upstream_id", "wa_messages.phone_number_id", "wa_messages.upstream_id", "wa_inbound.upstream_id",
        "wa_inbound.phone_number_id", "broadcasts.phone_number_id", "wa_calls.call_id", "wa_payments.payment_id", "wa_payments.reference_id", "customers.user_id",
        "capi_configs.dataset_id", "capi_events.event_id",
        "actor_outbox.outbox_id", "actor_outbox.msg_id", "actor_timers.timer_id",
        "webhook_deliveries.delivery_id", "webhook_attempts.delivery_id", "webhook_dead_letters.delivery_id",
        "contacts.contact_id", "inbound_messages.upstream_id", "auto_reply_fires.inbound_id", "webhook_batch_items.item_id"
      ])
      for (const c of columns) {
        const name = `${c.tableName}.${c.columnName}`
        if (c.columnName.endsWith("_at")) expect(c.dataType, name).toBe("timestamp with time zone")
        else if (!runtimeIds.has(name)) expect(c.dataType, name).toBe("uuid")
      }
      expect(columns.length).toBeGreaterThan(10)
    }))
})
