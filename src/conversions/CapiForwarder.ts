import { Effect, FiberSet } from "effect"
import type { LeaseGuard } from "../actors/runtime/leaseGuard.ts"
import { type CapiForward, CapiGateway } from "../gateway/CapiGateway.ts"

/**
 * Runs the node's CAPI requests outside the actor that asked for them (the actor's command is held
 * until the answer comes): fibers of the node's scope, interrupted when the node stops, after
 * which the held commands are applied again by the partition's next owner.
 */
export class CapiForwarder extends Effect.Service<CapiForwarder>()("herald/conversions/CapiForwarder", {
  scoped: Effect.gen(function*() {
    const gateway = yield* CapiGateway
    const fibers = yield* FiberSet.make<void, never>()
    const run = yield* FiberSet.runtime(fibers)<never>()
    /**
     * The `capi` partition's lease is checked just before the request leaves: a node that gave it
     * up sends nothing and answers nothing (the held command is applied again by the next owner).
     */
    const submit = (datasetId: string, accessToken: string, body: Buffer, lease: LeaseGuard, done: (forward: CapiForward) => void) =>
      Effect.sync(() => {
        run(lease.current.pipe(
          Effect.matchEffect({
            onSuccess: () => Effect.map(gateway.forward(datasetId, accessToken, body), done),
            onFailure: () => Effect.logDebug("CAPI request not made: this node gave up the partition")
          })
        ))
      })
    return { submit } as const
  })
}) {}
