import { Cause, Deferred, Effect, FiberMap, Queue, Schema } from "effect"
import { labelled } from "../../observability/labelled.ts"
import type { Applied, Entry, Resident } from "./applied.ts"
import * as M from "./metrics.ts"
import type { LeaseGuard } from "./leaseGuard.ts"
import type { PartitionEnv, RegisteredKind } from "./partitionEnv.ts"
import type { StreamCommand } from "./streamCommand.ts"
import { makePartitionTimers } from "./partitionTimers.ts"

/** A held actor: what it applied, not yet written, and the stream commands that arrived meanwhile. */
export interface Held {
  readonly into: Applied
  readonly waiting: Array<StreamCommand>
  beatAt: number
}

export type PartitionState = Effect.Effect.Success<ReturnType<typeof makePartitionState>>

/**
 * What one owned (kind, partition) keeps while it runs, shared by its batch fiber, the fibers of
 * its retrying actors, its passivation sweep and its consumer's callback. All of them run on one
 * thread and touch it only between effects, so plain maps are enough.
 */
export const makePartitionState = (env: PartitionEnv, registered: RegisteredKind, partition: number, epoch: number, lease: LeaseGuard) =>
  Effect.gen(function*() {
    const { kind } = registered
    const lost = yield* Deferred.make<string>()
    const committer = yield* env.committerOf(kind)
    const retryFibers = yield* FiberMap.make<string>()
    const runRetrying = yield* FiberMap.runtime(retryFibers)<never>()
    const timers = yield* makePartitionTimers(env, kind, partition, epoch)
    const inbox = yield* Queue.unbounded<Entry>()
    const byPartition = { kind: kind.name, partition: String(partition) }
    const state = {
      env,
      registered,
      kind,
      partition,
      epoch,
      /** Completes when the partition must be dropped at once (fenced out, consumer lost). */
      lost,
      committer,
      fence: { partition, epoch },
      /** Checked before work leaves the node for this partition (ActorContext.lease). */
      lease,
      runRetrying,
      timers,
      metrics: {
        depth: labelled(M.mailboxDepth, byPartition),
        active: labelled(M.activeActors, byPartition),
        processed: labelled(M.commandsProcessed, { kind: kind.name }),
        failed: labelled(M.commandsFailed, { kind: kind.name }),
        parked: labelled(M.commandsParked, { kind: kind.name }),
        latency: labelled(M.processingSeconds, { kind: kind.name }),
        lateness: labelled(M.timerLatenessSeconds, { kind: kind.name })
      },
      // Synchronous: kinds' schemas have no asynchronous parts, and an Effect per command and per
      // state write costs more than the decoding itself.
      decodeCommand: Schema.decodeUnknownEither(kind.command),
      encodeCommand: Schema.encode(kind.command),
      decodeState: Schema.decodeUnknown(kind.state),
      encodeState: Schema.encodeSync(kind.state),
      /** Commands received and not yet acknowledged. */
      inflight: 0,
      /**
       * Actors holding a command (ActorContext.hold): what they applied, not yet written, and the
       * stream commands that arrived meanwhile, applied once the continuation has been.
       */
      holding: new Map<string, Held>(),
      nextHoldId: 0,
      /** Set once the scope closes: a continuation handed over later is dropped. */
      closed: false,
      residents: new Map<string, Resident>(),
      inbox,
      /**
       * Actors retrying a failed command in their own fiber, and the commands queued for them (their
       * fiber takes them in order and hands the actor back once none is left).
       */
      retrying: new Map<string, Array<Entry>>(),
      /** Held actors whose continuation is being applied in the current batch (not to be expired). */
      continuing: new Set<string>(),
      /** Commands that waited behind a hold whose continuation is committed: the next batch's first. */
      resumed: [] as Array<Entry>
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => (state.closed = true)))
    return state
  })

/** A fiber of the partition that crashes (not interrupted) drops the partition. */
export const crashed = (p: PartitionState, what: string) => (cause: Cause.Cause<unknown>) =>
  Cause.isInterruptedOnly(cause)
    ? Effect.void
    : Effect.zipRight(Effect.logError(`${what} crashed; dropping the partition`, cause), Deferred.succeed(p.lost, `${what} crashed`))
