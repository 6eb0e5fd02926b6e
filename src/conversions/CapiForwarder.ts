import { Effect, FiberSet } from "effect"
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
    const submit = (datasetId: string, accessToken: string, body: Buffer, done: (forward: CapiForward) => void) =>
      Effect.sync(() => {
        run(Effect.map(gateway.forward(datasetId, accessToken, body), done))
      })
    return { submit } as const
  })
}) {}
