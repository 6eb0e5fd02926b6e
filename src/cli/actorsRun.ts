import { Effect, Layer } from "effect"
import { ClusterView } from "../actors/runtime/ClusterView.ts"
import { PoisonQueue } from "../actors/runtime/poison.ts"
import { NatsLive } from "../bus/Nats.ts"
import { onDatabase } from "./oneShot.ts"
import { printJson } from "./output.ts"

/** The actor commands' work (src/cli/actors.ts loads this module when one of them runs). */
const OnBus = onDatabase(Layer.mergeAll(PoisonQueue.Default, ClusterView.Default).pipe(Layer.provideMerge(NatsLive)))

export const partitions = Effect.gen(function*() {
  const view = yield* (yield* ClusterView).partitions
  yield* printJson({ partitions_per_kind: view.partitionsPerKind, nodes: view.nodes, partitions: view.byKind })
}).pipe(Effect.provide(OnBus))

export const poisonList = (options: { readonly kind: string | undefined; readonly includeRedriven: boolean; readonly limit: number }) =>
  Effect.gen(function*() {
    const parked = yield* (yield* PoisonQueue).list(options)
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
  }).pipe(Effect.provide(OnBus))

export const poisonRedrive = (ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const queue = yield* PoisonQueue
    const redriven = yield* Effect.forEach(ids, (id) => queue.redrive(id))
    yield* printJson({ redriven })
  }).pipe(Effect.provide(OnBus))
