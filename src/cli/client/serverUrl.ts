import { Config, Effect } from "effect"
import { UsageError } from "./exitCodes.ts"

/** The port a Herald server listens on when `PORT` is unset (src/config/AppConfig.ts). */
export const DEFAULT_PORT = 8080

/** The default of the commands' `--url`, for their help. */
export const LOCAL_URL_HELP = `http://127.0.0.1:$PORT when PORT is set, else http://127.0.0.1:${DEFAULT_PORT}`

/**
 * The server on this machine, where a command's `--url` points when it is not given: port `PORT`,
 * as `herald serve` reads it, else 8080. A `PORT` that is not a port (the server's 0, "any free
 * port", included) is a usage error rather than a guess.
 */
export const localServerUrl = Config.integer("PORT").pipe(
  Config.withDefault(DEFAULT_PORT),
  Effect.filterOrFail((port) => port >= 1 && port <= 65535, () => "out of range"),
  Effect.map((port) => `http://127.0.0.1:${port}`),
  Effect.catchAll(() =>
    Effect.flatMap(
      Config.string("PORT").pipe(Effect.orElseSucceed(() => "")),
      (port) => new UsageError({ message: `--url defaults to http://127.0.0.1:$PORT, but PORT=${JSON.stringify(port)} is not a port (1 to 65535): give --url` })
    )
  )
)
