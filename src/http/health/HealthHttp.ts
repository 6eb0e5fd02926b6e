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
          const [postgres, reachable, migrated] = yield* Effect.all(
            [up(sql`SELECT 1`), up(nats.ping), Effect.map(storage.isReady, (ok) => (ok ? "up" as const : "down" as const))],
            { concurrency: "unbounded" }
          )
          // NATS counts as up once its streams and buckets hold HERALD_NATS_REPLICAS replicas: a
          // node whose commands would live on fewer servers than the operator asked for is not ready.
          const placement = yield* nats.placementProblem
          const prepared = Option.isSome(owned) ? yield* owned.value.busPrepared : true
          const natsState = reachable === "up" && Option.isNone(placement) && prepared ? "up" as const : "down" as const
          const checks = { postgres, migrations: migrated, nats: natsState }
          const down = Object.entries(checks).filter(([, v]) => v === "down").map(([k]) => k)
          if (down.length > 0) {
            const why = reachable === "down"
              ? ""
              : Option.isSome(placement)
              ? ` (${placement.value})`
              : !prepared
              ? ` (creating its streams and KV buckets with ${nats.replicas} replica${nats.replicas === 1 ? "" : "s"})`
              : ""
            return yield* new NotReady({ message: `not ready: ${down.join(", ")} down${why}`, checks })
          }
          const partitions = Option.isSome(owned) ? yield* owned.value.snapshot : {}
          return { status: "ready" as const, node_id: config.nodeId, role: config.role, checks, partitions_owned: partitions }
        })
      )
  }))
