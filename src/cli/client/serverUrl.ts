import { Config, Effect, Option } from "effect"
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

/**
 * What `herald connect` says when nothing answers at `url`: the URL it tried and where that came
 * from (`--url`, or the default and the PORT behind it), and the `--url` to give: the server on
 * this machine at PORT when PORT is set and is not where it looked, else how to name one.
 */
export const unreachableAdvice = (url: string, fromOption: boolean, cause: string) =>
  Effect.map(Config.string("PORT").pipe(Config.option, Effect.orElseSucceed(() => Option.none<string>())), (port) => {
    const portNumber = Option.isSome(port) && /^\d{1,5}$/.test(port.value) && Number(port.value) >= 1 && Number(port.value) <= 65535 ? Number(port.value) : undefined
    const portUrl = portNumber === undefined ? undefined : `http://127.0.0.1:${portNumber}`
    const origin = fromOption ? "given with --url" : Option.isSome(port) ? `the default, from PORT=${port.value}` : `the default: PORT is not set`
    const next = fromOption && portUrl !== undefined && portUrl !== url
      ? `Is Herald running there? PORT is ${portNumber} here: if that is the server's, give --url ${portUrl}`
      : `Is Herald running? Start it (herald serve), or give its address with --url URL (a server started with PORT=N listens on http://127.0.0.1:N)`
    return `no server answers at ${url} (${origin}): ${cause}. ${next}. Nothing asked, nothing stored`
  })
