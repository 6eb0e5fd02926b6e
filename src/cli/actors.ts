import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { ClusterView } from "../actors/runtime/ClusterView.ts"
import { PoisonQueue } from "../actors/runtime/poison.ts"
import { requiredArg, withDefault } from "./help.ts"
import { printJson } from "./output.ts"

/** `herald admin partitions`: the live worker nodes and the current owner of each partition. */
export const partitions = Command.make("partitions", {}, () =>
  Effect.gen(function*() {
    const view = yield* (yield* ClusterView).partitions
    yield* printJson({ partitions_per_kind: view.partitionsPerKind, nodes: view.nodes, partitions: view.byKind })
  })).pipe(Command.withDescription("Show the live worker nodes and the owner of each actor partition"))

const list = Command.make(
  "list",
  {
    kind: Options.text("kind").pipe(Options.withDescription("only commands of this actor kind, as the list shows it. When absent, every kind."), Options.optional),
    all: Options.boolean("all").pipe(Options.withDescription("include commands already re-driven. When absent, only those still parked.")),
    limit: Options.integer("limit").pipe(Options.withDescription("how many to list at most, newest first"), withDefault(100))
  },
  (input) =>
    Effect.gen(function*() {
      const parked = yield* (yield* PoisonQueue).list({ kind: Option.getOrUndefined(input.kind), includeRedriven: input.all, limit: input.limit })
      yield* printJson({
        parked: parked.map((p) => ({
          poison_id: p.poisonId,
          kind: p.kind,
          key: p.actorKey,
          partition: p.partition,
          seq: Number(p.seq),
          command: p.command,
          error: p.error,
          attempts: p.attempts,
          parked_at: new Date(p.parkedAt).toISOString(),
          redriven_at: p.redrivenAt ? new Date(p.redrivenAt).toISOString() : null
        }))
      })
    })
).pipe(Command.withDescription("List commands parked after failing every try"))

const poisonIds = Args.text({ name: "POISON_ID" }).pipe(Args.withDescription("a parked command's poison_id, as poison list printed it"), requiredArg, Args.atLeast(1))

const redrive = Command.make("redrive", { ids: poisonIds }, (input) =>
  Effect.gen(function*() {
    const queue = yield* PoisonQueue
    const redriven = yield* Effect.forEach(input.ids, (id) => queue.redrive(id))
    yield* printJson({ redriven })
  })).pipe(Command.withDescription("Publish parked commands again"))

export const poison = Command.make("poison").pipe(
  Command.withDescription("Commands parked in the poison table"),
  Command.withSubcommands([list, redrive])
)
