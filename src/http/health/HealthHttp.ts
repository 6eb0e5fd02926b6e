import { SqlClient } from "@effect/sql"
import { Duration, Effect, Option } from "effect"
import { OwnedPartitions } from "../../actors/runtime/OwnedPartitions.ts"
import { Nats } from "../../bus/Nats.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { Storage } from "../../storage/Migrations.ts"
import { HeraldApi } from "../Api.ts"
import { NotReady } from "./HealthApi.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

const up = <A, E, R>(check: Effect.Effect<A, E, R>) =>
  check.pipe(
    Effect.timeout(Duration.seconds(2)),
    Effect.as("up" as const),
    Effect.catchAllCause(() => Effect.succeed("down" as const))
  )

export const HealthHttpLive = apiGroup(HeraldApi, "health", (handlers) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const sql = yield* SqlClient.SqlClient
    const nats = yield* Nats
    const storage = yield* Storage
    const owned = yield* Effect.serviceOption(OwnedPartitions)
    return handlers
      .handle("live", () => Effect.succeed({ status: "live" as const }))
      .handle("ready", () =>
        Effect.gen(function*() {
          const [postgres, nats_, migrated] = yield* Effect.all(
            [up(sql`SELECT 1`), up(nats.ping), Effect.map(storage.isReady, (ok) => (ok ? "up" as const : "down" as const))],
            { concurrency: "unbounded" }
          )
          const checks = { postgres, migrations: migrated, nats: nats_ }
          const down = Object.entries(checks).filter(([, v]) => v === "down").map(([k]) => k)
          if (down.length > 0) {
            return yield* new NotReady({ message: `not ready: ${down.join(", ")} down`, checks })
          }
          const partitions = Option.isSome(owned) ? yield* owned.value.snapshot : {}
          return { status: "ready" as const, node_id: config.nodeId, role: config.role, checks, partitions_owned: partitions }
        })
      )
  }))
