import { Args, Command, Options } from "@effect/cli"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { makeLeases } from "../actors/runtime/leases.ts"
import { makeMembership, nodeInfo } from "../actors/runtime/membership.ts"
import { PoisonQueue } from "../actors/runtime/poison.ts"
import { LEASE_TTL } from "../actors/runtime/ActorRuntime.ts"
import { Nats } from "../bus/Nats.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Duration } from "effect"
import { requiredArg, withDefault } from "./help.ts"
import { printJson } from "./output.ts"

/** `herald admin partitions`: the live worker nodes and the current owner of each partition. */
export const partitions = Command.make("partitions", {}, () =>
  Effect.gen(function*() {
    const nats = yield* Nats
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const ttl = Duration.toMillis(LEASE_TTL)
    const leases = makeLeases(yield* nats.kv("leases", { ttl, history: 1 }), config.nodeId)
    const membership = makeMembership(yield* nats.kv("nodes", { ttl, history: 1 }), nodeInfo(config.nodeId, "cli"))
    const [held, nodes, epochs] = yield* Effect.all([
      leases.list,
      membership.list,
      sql<{ kind: string; partition: number; epoch: string; owner: string; acquiredAt: Date }>`
        SELECT kind, partition, epoch, owner, acquired_at FROM partition_epochs ORDER BY kind, partition`.pipe(Effect.orDie)
    ])
    const owners = new Map(held.map((l) => [l.key, l]))
    const byKind: Record<string, Array<{ partition: number; owner: string | null; epoch: number; since: string }>> = {}
    for (const e of epochs) {
      const lease = owners.get(`${e.kind}.${e.partition}`)
      ;(byKind[e.kind] ??= []).push({
        partition: e.partition,
        // The fence row remembers the last owner; only a live lease makes it the current one.
        owner: lease?.node ?? null,
        epoch: Number(e.epoch),
        since: new Date(e.acquiredAt).toISOString()
      })
    }
    yield* printJson({ partitions_per_kind: config.partitions, nodes: nodes.sort((a, b) => a.node_id.localeCompare(b.node_id)), partitions: byKind })
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
