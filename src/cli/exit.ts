import { ValidationError } from "@effect/cli"
import { Cause, Effect, Option } from "effect"
import { isClientFailure } from "./client/exitCodes.ts"
import { reportClientFailure } from "./client/output.ts"

/**
 * How every `herald` command ends on a failure: an interruption quietly, a usage error (@effect/cli
 * printed it with the usage) with exit 2, a client command's failure with its own code; anything
 * else as `rest` reports it. It imports nothing of the server: the client's bundle uses it too.
 */
export const onFailure = (rest: (failure: unknown, cause: Cause.Cause<unknown>) => Effect.Effect<void>) => (cause: Cause.Cause<unknown>) => {
  if (Cause.isInterruptedOnly(cause)) return Effect.void
  const failure = Option.getOrUndefined(Cause.failureOption(cause))
  if (ValidationError.isValidationError(failure)) return Effect.sync(() => void (process.exitCode = 2))
  if (isClientFailure(failure)) return reportClientFailure(failure)
  return rest(failure, cause)
}
