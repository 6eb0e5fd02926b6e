import { Effect } from "effect"
import { IMPORT_CPU_SHARE } from "./importLimits.ts"

/**
 * Node-wide pacing of import work (reading rows, checking phones), shared by every import on the
 * node. Work runs in slices of at most IMPORT_SLICE_MS; before each slice the import yields to
 * the event loop (a macrotask, so sockets, timers and lease renewals run in between: an Effect
 * `yieldNow` does not reach them), and once imports have used their share of the loop's time
 * they wait out the rest. Other requests therefore always get at least 1 − IMPORT_CPU_SHARE of
 * an API node, however many imports run and whatever they carry.
 */
export interface ImportPacer {
  /**
   * Runs one slice of synchronous import work in its turn (at least a turn of the event loop,
   * longer while imports are over their share) and counts the time it took.
   */
  readonly slice: <A>(work: () => A) => Effect.Effect<A>
}

export const makeImportPacer = (share = IMPORT_CPU_SHARE): ImportPacer => {
  // When the imports' next slice may start (performance.now() time): work done moves it on by
  // what the rest of the node is owed for it.
  let nextAt = 0
  const turn = Effect.async<void>((resume) => {
    const wait = nextAt - performance.now()
    if (wait >= 1) {
      const timer = setTimeout(() => resume(Effect.void), wait)
      return Effect.sync(() => clearTimeout(timer))
    }
    const immediate = setImmediate(() => resume(Effect.void))
    return Effect.sync(() => clearImmediate(immediate))
  })
  const slice = <A>(work: () => A) =>
    Effect.zipRight(
      turn,
      Effect.sync(() => {
        const began = performance.now()
        const done = work()
        nextAt = Math.max(nextAt, performance.now()) + ((performance.now() - began) * (1 - share)) / share
        return done
      })
    )
  return { slice }
}
