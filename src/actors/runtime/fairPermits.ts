import { Effect, Queue } from "effect"

/** Runs effects at most `n` at a time, admitting waiters in arrival order. */
export interface FairPermits {
  readonly withPermit: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * A semaphore for thousands of waiters (every actor of a node with commands queued). Effect's
 * `Semaphore` wakes all its waiters on each release and lets them race for the permit, the losers
 * queueing again: with a few thousand actors waiting that is quadratic, and it took a worker's
 * whole CPU at a few hundred commands per second. Here the permits are tokens in a bounded queue:
 * a release hands its token to the oldest waiter, in constant time.
 */
export const makeFairPermits = (n: number) =>
  Effect.gen(function*() {
    const tokens = yield* Queue.bounded<void>(n)
    yield* Queue.offerAll(tokens, Array.from({ length: n }, () => undefined))
    const withPermit = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(restore(Queue.take(tokens)), Effect.ensuring(restore(self), Queue.offer(tokens, undefined)))
      )
    return { withPermit } satisfies FairPermits
  })
