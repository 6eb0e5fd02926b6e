import { type Deferred, type Duration, Effect } from "effect"
import { processBatch } from "./batchLoop.ts"
import type { LeaseGuard } from "./leaseGuard.ts"
import { serveEphemeral } from "./ephemeralServer.ts"
import { consumeCommands, durableConsumer, watchStuckConsumer } from "./partitionConsumer.ts"
import type { PartitionEnv, RegisteredKind } from "./partitionEnv.ts"
import { crashed, makePartitionState } from "./partitionState.ts"
import { passivation } from "./residents.ts"
import { ephemeralSubject } from "./transport.ts"

export type { PartitionEnv, RegisteredKind } from "./partitionEnv.ts"

export interface OwnedPartition {
  readonly kind: string
  readonly partition: number
  readonly epoch: number
  /** Completes when the partition must be dropped at once (fenced out, consumer lost). */
  readonly lost: Deferred.Deferred<string>
  /** Stops fetching and waits (bounded) until every command received was acknowledged. */
  readonly drain: (deadline: Duration.DurationInput) => Effect.Effect<void>
}

/**
 * Runs one owned (kind, partition) until its scope closes: the durable consumer, the fiber applying
 * its commands in batches, the group committer, and the partition's durable timers.
 *
 * The order matters: the scope closes in reverse, so the ephemeral server and the consumer stop
 * before the fibers that apply and commit what they received.
 */
export const startPartition = (env: PartitionEnv, registered: RegisteredKind, partition: number, epoch: number, lease: LeaseGuard) =>
  Effect.gen(function*() {
    const { kind } = registered
    const p = yield* makePartitionState(env, registered, partition, epoch, lease)
    yield* processBatch(p).pipe(
      Effect.forever,
      Effect.provide(registered.services),
      Effect.catchAllCause(crashed(p, "the batch fiber")),
      Effect.forkScoped
    )
    yield* passivation(p).pipe(Effect.forkScoped)
    const consumer = yield* durableConsumer(p)
    yield* p.timers.run
    const drain = yield* consumeCommands(p, consumer)
    yield* watchStuckConsumer(p).pipe(Effect.forkScoped)
    if (kind.ephemeral !== undefined) yield* serveEphemeral(env.bus, ephemeralSubject(env.names, kind.name, partition), kind.ephemeral.make())
    yield* Effect.annotateLogs(Effect.logDebug("partition started"), { kind: kind.name, partition, epoch })
    return { kind: kind.name, partition, epoch, lost: p.lost, drain } satisfies OwnedPartition
  })
