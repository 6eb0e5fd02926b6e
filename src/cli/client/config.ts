import { FileSystem } from "@effect/platform"
import { Config, Effect, Option, Redacted, Schema } from "effect"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { NotConnected } from "./exitCodes.ts"

/** What `herald connect` stores: the server and the account's secret key. */
export interface Connection {
  readonly url: string
  readonly key: Redacted.Redacted<string>
}

const ConfigFile = Schema.parseJson(Schema.Struct({ url: Schema.String, key: Schema.String }))

const env = (name: string) =>
  Config.string(name).pipe(
    Config.option,
    Effect.orElseSucceed(() => Option.none<string>()),
    Effect.map(Option.filter((value) => value !== ""))
  )

/**
 * Where the connection is kept: `$HERALD_CONFIG`, else `$XDG_CONFIG_HOME/herald/config.json`,
 * else `~/.config/herald/config.json` (an empty variable counts as unset).
 */
export const configPath = Effect.gen(function*() {
  const explicit = yield* env("HERALD_CONFIG")
  if (Option.isSome(explicit)) return explicit.value
  const xdg = yield* env("XDG_CONFIG_HOME")
  const base = Option.getOrElse(xdg, () => join(homedir(), ".config"))
  return join(base, "herald", "config.json")
})

/** The stored connection, or NotConnected (absent or unreadable file). */
export const readConnection = Effect.fn("ClientConfig.read")(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* configPath
  const text = yield* fs.readFileString(path).pipe(
    Effect.mapError((error) =>
      new NotConnected({
        message: error._tag === "SystemError" && error.reason === "NotFound"
          ? "not connected: run herald connect first"
          : `cannot read ${path} (${error.message}): run herald connect first`
      })
    )
  )
  const stored = yield* Schema.decode(ConfigFile)(text).pipe(
    Effect.mapError(() => new NotConnected({ message: `${path} is not a herald config file: run herald connect again` }))
  )
  return { url: stored.url, key: Redacted.make(stored.key) } satisfies Connection
})

/**
 * Stores the connection atomically: the directory is created with mode 0700, the file written
 * beside it with mode 0600 and renamed over the old one, so no reader sees half a file and the key
 * is never readable by others, not even for a moment.
 */
export const writeConnection = Effect.fn("ClientConfig.write")(function*(connection: Connection) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* configPath
  yield* fs.makeDirectory(dirname(path), { recursive: true, mode: 0o700 })
  const temp = `${path}.${process.pid}.tmp`
  const json = JSON.stringify({ url: connection.url, key: Redacted.value(connection.key) }, null, 2) + "\n"
  yield* Effect.gen(function*() {
    yield* fs.writeFileString(temp, json, { flag: "wx", mode: 0o600 })
    // The umask can only take bits away; chmod makes the mode exact whatever it is.
    yield* fs.chmod(temp, 0o600)
    yield* fs.rename(temp, path)
  }).pipe(Effect.tapError(() => fs.remove(temp, { force: true }).pipe(Effect.ignore)))
  return path
})

/** Removes the stored connection; whether there was one. */
export const removeConnection = Effect.fn("ClientConfig.remove")(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* configPath
  const existed = yield* fs.exists(path)
  if (existed) yield* fs.remove(path)
  return { path, existed }
})
