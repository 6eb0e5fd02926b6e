import { Effect, MutableRef, type Scope } from "effect"
import { GatewayCallbackUrl } from "../gateway/GatewayCallbackUrl.ts"

/**
 * Herald's own address as a simulator in its process asks for it at each callback attempt:
 * undefined until the HTTP server listens (a callback then waits and is retried), the address
 * once the awaited GatewayCallbackUrl completes. Each simulator appends its own path to it.
 */
export const heraldOrigin: Effect.Effect<() => string | undefined, never, GatewayCallbackUrl | Scope.Scope> = Effect.gen(function*() {
  const herald = yield* GatewayCallbackUrl
  const known = MutableRef.make<string | undefined>(undefined)
  yield* Effect.forkScoped(Effect.map(herald.origin, (origin) => MutableRef.set(known, origin)))
  return () => MutableRef.get(known)
})
