import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { errorResponse } from "../errors.ts"

export const CheckStatus = Schema.Literal("up", "down")

export const Checks = Schema.Struct({
  postgres: CheckStatus,
  migrations: CheckStatus,
  nats: CheckStatus
})

export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", {
  message: Schema.String,
  checks: Checks
}) {}

export const Ready = Schema.Struct({
  status: Schema.Literal("ready"),
  node_id: Schema.String,
  role: Schema.Literal("all", "api", "worker"),
  checks: Checks,
  /** What this node owns of the actor runtime, as information: owning none is still ready. */
  partitions_owned: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Number) })
})

export class HealthApi extends HttpApiGroup.make("health", { topLevel: true })
  .add(HttpApiEndpoint.get("live", "/health/live").addSuccess(Schema.Struct({ status: Schema.Literal("live") })))
  .add(
    HttpApiEndpoint.get("ready", "/health/ready")
      .addSuccess(Ready)
      .addError(errorResponse(NotReady, 503, "service_unavailable"))
  ) {}
