import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { errorResponse } from "../errors.ts"
import { documented } from "../openApiAnnotations.ts"

export const CheckStatus = Schema.Literal("up", "down")

export const Checks = Schema.Struct({
  postgres: CheckStatus.annotations({ description: "Whether Postgres answers." }),
  migrations: CheckStatus.annotations({ description: "Whether the schema is at this build's latest migration." }),
  nats: CheckStatus.annotations({ description: "Whether NATS (JetStream) answers." })
})

export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", {
  message: Schema.String,
  checks: Checks
}) {}

export const Ready = Schema.Struct({
  status: Schema.Literal("ready").annotations({ description: "Always ready on a 200." }),
  node_id: Schema.String.annotations({ description: "This node's id in the cluster." }),
  role: Schema.Literal("all", "api", "worker").annotations({ description: "What this node runs: the HTTP API, the actors (worker), or both (all)." }),
  checks: Checks.annotations({ description: "Each dependency's state: all up on a 200." }),
  /** What this node owns of the actor runtime, as information: owning none is still ready. */
  partitions_owned: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Number) }).annotations({
    description: "The actor partitions this node owns, by actor kind: information only (owning none is still ready)."
  })
})

const checksUp = { postgres: "up", migrations: "up", nats: "up" }

/** Probes for orchestrators: no credential, on api and worker nodes alike. */
export class HealthApi extends HttpApiGroup.make("health", { topLevel: true })
  .add(
    HttpApiEndpoint.get("live", "/health/live")
      .addSuccess(Schema.Struct({ status: Schema.Literal("live").annotations({ description: "Always live: the process answers." }) }))
      .annotateContext(documented({
        summary: "Liveness: the process answers",
        description: "200 as long as the process serves HTTP, whatever its dependencies: restart the node when this fails. No credential.",
        response: { status: "live" }
      }))
  )
  .add(
    HttpApiEndpoint.get("ready", "/health/ready")
      .addSuccess(Ready)
      // Its own component: the 503 of every other operation has no `checks`.
      .addError(errorResponse(NotReady, 503, "service_unavailable").annotations({
        identifier: "not_ready_error",
        description: "This node is not ready: `checks` says which dependency is down."
      }))
      .annotateContext(documented({
        summary: "Readiness: Postgres, migrations and NATS are up",
        description: "200 when this node can serve: Postgres answers, the schema is migrated and NATS answers; 503 `service_unavailable` " +
          "with each check's state otherwise, so a load balancer stops sending it requests. No credential.",
        response: {
          status: "ready",
          node_id: "api-1",
          role: "api",
          checks: checksUp,
          partitions_owned: { sender: [0, 1, 2, 3], delivery: [0, 1] }
        }
      }))
  )
  .annotate(OpenApi.Description, "Liveness and readiness probes for orchestrators and load balancers (no credential).") {}
