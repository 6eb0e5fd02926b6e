import { Cause, ConfigError } from "effect"
import { describeConfigError } from "../config/AppConfig.ts"
import { onFailure } from "./exit.ts"
import { printFailure } from "./output.ts"

/**
 * How a server-side `herald` command (serve, migrate, admin …) reports a failure: an invalid
 * configuration as invalid_config, a tagged error as its tag in snake case with its message,
 * anything else as internal_error; `{success:false, code, message}` on stderr, exit 1.
 */
export const reportFailure = onFailure((failure, cause) => {
  if (ConfigError.isConfigError(failure)) return printFailure("invalid_config", `invalid configuration: ${describeConfigError(failure)}`)
  if (failure !== undefined && failure !== null && typeof failure === "object" && "_tag" in failure && "message" in failure) {
    // Some errors carry what happened only in their cause (the HTTP server's ServeError: a port
    // already in use): an empty message says it instead of nothing.
    const message = String(failure.message) || ("cause" in failure && failure.cause !== undefined ? causeText(failure.cause) : "")
    return printFailure(snake(String(failure._tag)), message)
  }
  return printFailure("internal_error", Cause.pretty(cause))
})

function causeText(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause)
}

function snake(tag: string) {
  return tag.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()
}
