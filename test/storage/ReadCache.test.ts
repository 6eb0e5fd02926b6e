import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AppConfig } from "../../src/config/AppConfig.ts"
import type { Email } from "../../src/domain/identity.ts"
import { AccountsRepo } from "../../src/accounts/AccountsRepo.ts"
import { ChangeFeed } from "../../src/storage/ChangeFeed.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { makeReadCache } from "../../src/storage/ReadCache.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

const Env = Layer.mergeAll(ChangeFeed.Default, AccountsRepo.Default, Storage.Default).pipe(
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

const waitFor = <A, E, R>(check: Effect.Effect<A, E, R>, ok: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 250; i++) {
      const a = yield* check
      if (ok(a)) return a
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.dieMessage("condition not met within 5 s")
  })

layer(Env, { timeout: 60_000, excludeTestServices: true })("read cache over the change feed", (it) => {
  it.scoped("serves from memory, and forgets an account's rows when anyone changes them", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const feed = yield* ChangeFeed
      yield* waitFor(Effect.sync(() => feed.isLive()), Boolean)
      const sql = yield* SqlClient.SqlClient
      const { accountId } = yield* (yield* AccountsRepo).createWithOwner({ email: "cache@example.com" as Email, passwordHash: "x", label: "Before", plan: "growth" })
      const cache = yield* makeReadCache<string>({ tables: ["accounts"], capacity: 10 })
      let loads = 0
      const read = cache.get(
        accountId,
        () => Effect.map(sql<{ label: string }>`SELECT label FROM accounts WHERE account_id = ${accountId}`, (rows) => {
          loads++
          return { accountId, value: rows[0]!.label }
        })
      )
      expect(yield* read).toBe("Before")
      expect(yield* read).toBe("Before")
      expect(loads).toBe(1)
      // A write that bypasses Herald's services (as an operator's psql would).
      yield* sql`UPDATE accounts SET label = 'After' WHERE account_id = ${accountId}`
      expect(yield* waitFor(read, (label) => label === "After")).toBe("After")
      // Columns nobody caches do not invalidate.
      const before = loads
      yield* sql`UPDATE accounts SET wallet_balance = wallet_balance + 1 WHERE account_id = ${accountId}`
      yield* Effect.sleep("200 millis")
      yield* read
      expect(loads).toBe(before)
    }))

  it.scoped("serves nothing from memory while the feed is down, and caches again once it is back", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const feed = yield* ChangeFeed
      const config = yield* AppConfig
      const sql = yield* SqlClient.SqlClient
      yield* waitFor(Effect.sync(() => feed.isLive()), Boolean)
      const { accountId } = yield* (yield* AccountsRepo).createWithOwner({ email: "feed@example.com" as Email, passwordHash: "x", label: "L", plan: "growth" })
      const cache = yield* makeReadCache<string>({ tables: ["accounts"], capacity: 10 })
      let loads = 0
      const read = cache.get(accountId, () => Effect.sync(() => ({ accountId, value: `load ${++loads}` })))
      yield* read
      const epoch = feed.epoch()
      yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${`herald-${config.nodeId}-changes`}`
      yield* waitFor(Effect.sync(() => feed.epoch()), (e) => e > epoch)
      // Whatever was cached before the break is never served again: notifications may have been missed.
      const afterBreak = yield* read
      expect(afterBreak).not.toBe("load 1")
      yield* waitFor(Effect.sync(() => feed.isLive()), Boolean)
      const settled = yield* read
      expect(yield* read).toBe(settled)
    }))
})
