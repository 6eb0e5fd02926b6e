import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ActorClient, Outbox } from "../../src/actors/runtime/index.ts"
import { NatsLive } from "../../src/bus/Nats.ts"
import type { Email } from "../../src/domain/identity.ts"
import { AccountsRepo } from "../../src/accounts/AccountsRepo.ts"
import { BotsRepo } from "../../src/bots/BotsRepo.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { Webhooks } from "../../src/webhooks/Webhooks.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"
import { signedIn } from "../support/principals.ts"

const Env = Layer.mergeAll(Webhooks.Default, AccountsRepo.Default, BotsRepo.Default).pipe(
  Layer.provideMerge(Outbox.Default),
  Layer.provideMerge(ActorClient.Default),
  Layer.provideMerge(Layer.mergeAll(NatsLive, Storage.Default)),
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)


layer(Env, { timeout: 60_000, excludeTestServices: true })("event fan-out", (it) => {
  it.effect("one delivery per active subscription that asked for the type and covers the bot, each with its actor's Start in the outbox", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const sql = yield* SqlClient.SqlClient
      const webhooks = yield* Webhooks
      const { accountId } = yield* (yield* AccountsRepo).createWithOwner({ email: "emit@example.com" as Email, passwordHash: "x", label: "E", plan: "growth" })
      const other = yield* (yield* AccountsRepo).createWithOwner({ email: "other@example.com" as Email, passwordHash: "x", label: "O", plan: "growth" })
      const bots = yield* BotsRepo
      const one = yield* bots.create({ accountId, name: "one", useCase: null, status: "active" })
      const two = yield* bots.create({ accountId, name: "two", useCase: null, status: "active" })
      const owner = signedIn(accountId)
      const make = (events: Array<string>, botId: string | null, principal = owner) =>
        Effect.map(webhooks.create(principal, { url: "https://example.com/hook", events, botId }), (w) => w.webhook.webhookId)
      const allBots = yield* make(["message.sent"], null)
      const onOne = yield* make(["message.sent", "message.read"], one.botId)
      yield* make(["message.sent"], two.botId)
      yield* make(["message.failed"], null)
      const inactive = yield* make(["message.sent"], null)
      yield* webhooks.update(owner, inactive, { active: false })
      const deleted = yield* make(["message.sent"], one.botId)
      yield* webhooks.remove(owner, deleted)
      yield* make(["message.sent"], null, signedIn(other.accountId))

      const ids = yield* webhooks.committed(webhooks.emit({ accountId, type: "message.sent", botId: one.botId, data: { message_id: "m1" } }))
      expect(ids).toHaveLength(2)
      const rows = yield* sql<{ deliveryId: string; webhookId: string; envelope: any }>`
        SELECT delivery_id, webhook_id, envelope FROM webhook_deliveries WHERE delivery_id = ANY(${ids})`
      expect(new Set(rows.map((r) => r.webhookId))).toEqual(new Set([allBots, onOne]))
      for (const row of rows) {
        expect(row.deliveryId).toMatch(/^wd_[0-9a-f-]{36}$/)
        expect(row.envelope).toMatchObject({ type: "message.sent", delivery_id: row.deliveryId, account_id: accountId, data: { message_id: "m1" } })
        expect(Object.keys(row.envelope).sort()).toEqual(["account_id", "data", "delivery_id", "event_id", "occurred_at", "type"])
      }
      expect(rows[0]!.envelope.event_id).toBe(rows[1]!.envelope.event_id)
      const starts = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM actor_outbox WHERE msg_id = ANY(${ids.map((id) => `start-${id}`)})`
      expect(starts[0]!.n).toBe(2)

      // An event of a type nobody asked for, or of a bot nobody covers, makes no delivery.
      expect(yield* webhooks.committed(webhooks.emit({ accountId, type: "broadcast.completed", botId: one.botId, data: {} }))).toEqual([])
    }))
})
