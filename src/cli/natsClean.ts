import { Command, Options } from "@effect/cli"
import { Effect } from "effect"

/**
 * `herald admin nats-clean [--yes]`: removes the deployment's NATS streams, consumers and KV
 * buckets (those of HERALD_NATS_PREFIX), for someone done with Herald or with one deployment of
 * it. Its work (src/cli/natsCleanRun.ts) and the NATS client load only when it runs.
 */
export const natsClean = Command.make(
  "nats-clean",
  {
    yes: Options.boolean("yes").pipe(
      Options.withDescription("remove without asking. When absent, it asks: at a prompt on a terminal, or reads y or yes as the first line of a pipe.")
    )
  },
  (input) => Effect.flatMap(Effect.promise(() => import("./natsCleanRun.ts")), (run) => run.natsClean(input))
).pipe(Command.withDescription("Remove the deployment's NATS streams, consumers and KV buckets (HERALD_NATS_PREFIX); refuses while its nodes run"))
