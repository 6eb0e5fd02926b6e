import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { requiredArg, withDefault } from "./help.ts"

/**
 * What these commands run, loaded only when one of them runs: the actor runtime's modules and a
 * NATS connection cost every other one-shot command nothing.
 */
const load = Effect.promise(() => import("./actorsRun.ts"))

/** `herald admin partitions`: the live worker nodes and the current owner of each partition. */
export const partitions = Command.make("partitions", {}, () => Effect.flatMap(load, (run) => run.partitions)).pipe(
  Command.withDescription("Show the live worker nodes and the owner of each actor partition")
)

const list = Command.make(
  "list",
  {
    kind: Options.text("kind").pipe(Options.withDescription("only commands of this actor kind, as the list shows it. When absent, every kind."), Options.optional),
    all: Options.boolean("all").pipe(Options.withDescription("include commands already re-driven. When absent, only those still parked.")),
    limit: Options.integer("limit").pipe(Options.withDescription("how many to list at most, newest first"), withDefault(100))
  },
  (input) => Effect.flatMap(load, (run) => run.poisonList({ kind: Option.getOrUndefined(input.kind), includeRedriven: input.all, limit: input.limit }))
).pipe(Command.withDescription("List commands parked after failing every try"))

const poisonIds = Args.text({ name: "POISON_ID" }).pipe(Args.withDescription("a parked command's poison_id, as poison list printed it"), requiredArg, Args.atLeast(1))

const redrive = Command.make("redrive", { ids: poisonIds }, (input) => Effect.flatMap(load, (run) => run.poisonRedrive(input.ids))).pipe(
  Command.withDescription("Publish parked commands again")
)

export const poison = Command.make("poison").pipe(
  Command.withDescription("Commands parked in the poison table"),
  Command.withSubcommands([list, redrive])
)
