import { Terminal } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Console, Effect, Either } from "effect"
import { noColorRequested, stripColours, stripEscapes, withColourRule } from "../../src/cli/colour.ts"
import { renderJson } from "../../src/cli/client/output.ts"
import { localServerUrl } from "../../src/cli/client/serverUrl.ts"
import { loadSettings } from "../../src/config/AppConfig.ts"

const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("the colour rule", () => {
  it.effect("NO_COLOR set to anything but the empty string asks for no colour (no-color.org)", () =>
    Effect.gen(function*() {
      expect(yield* noColorRequested.pipe(withEnv({}))).toBe(false)
      expect(yield* noColorRequested.pipe(withEnv({ NO_COLOR: "" }))).toBe(false)
      expect(yield* noColorRequested.pipe(withEnv({ NO_COLOR: "1" }))).toBe(true)
      expect(yield* noColorRequested.pipe(withEnv({ NO_COLOR: "false" }))).toBe(true)
    }))

  it("strips colours, keeping cursor moves, or every escape sequence", () => {
    const coloured = renderJson({ a: "b", n: 1, t: true, z: null }, true)
    expect(coloured).toContain("\u001b[")
    expect(stripColours(coloured)).toBe(renderJson({ a: "b", n: 1, t: true, z: null }, false))
    const prompt = "\u001b[?25l\u001b[2K\u001b[G\u001b[1;36m?\u001b[0m Secret key \u001b]0;title\u0007›"
    expect(stripColours(prompt)).toBe("\u001b[?25l\u001b[2K\u001b[G? Secret key \u001b]0;title\u0007›")
    expect(stripEscapes(prompt)).toBe("? Secret key ›")
    expect(stripEscapes("plain")).toBe("plain")
  })

  it.effect("a command's Console output is plain where the stream gets no colour", () =>
    Effect.gen(function*() {
      // vitest's workers write to pipes: neither stdout nor stderr is a terminal.
      expect([process.stdout.isTTY, process.stderr.isTTY]).not.toContain(true)
      const printed: Array<[string, string]> = []
      const base = yield* Effect.console
      const capture: Console.Console = {
        ...base,
        unsafe: {
          ...base.unsafe,
          log: (...args: ReadonlyArray<unknown>) => void printed.push(["log", args.join(" ")]),
          error: (...args: ReadonlyArray<unknown>) => void printed.push(["error", args.join(" ")])
        }
      }
      const terminal = Terminal.Terminal.of({
        columns: Effect.succeed(80),
        rows: Effect.succeed(24),
        isTTY: Effect.succeed(false),
        readInput: Effect.die("unused"),
        readLine: Effect.die("unused"),
        display: () => Effect.void
      })
      yield* Effect.gen(function*() {
        const console = yield* Effect.console
        console.unsafe.log("\u001b[1mUSAGE\u001b[0m", { n: 1 })
        console.unsafe.error("\u001b[31mMissing argument\u001b[0m")
        yield* Console.log("\u001b[0;1mOPTIONS\u001b[0m")
      }).pipe(withColourRule, Effect.withConsole(capture), Effect.provideService(Terminal.Terminal, terminal))
      expect(printed).toEqual([["log", "USAGE { n: 1 }"], ["error", "Missing argument"], ["log", "OPTIONS"]])
    }))
})

describe("--url's default", () => {
  it.effect("follows PORT as the server reads it, else 8080; a PORT that is not a port is a usage error", () =>
    Effect.gen(function*() {
      expect(yield* localServerUrl.pipe(withEnv({}))).toBe("http://127.0.0.1:8080")
      for (const port of ["9000", "1", "65535"]) {
        const server = Either.getOrThrow(yield* Effect.either(loadSettings.pipe(withEnv({ PORT: port, LOG_FORMAT: "json" }))))
        expect(yield* localServerUrl.pipe(withEnv({ PORT: port }))).toBe(`http://127.0.0.1:${server.port}`)
      }
      for (const port of ["0", "65536", "http", ""]) {
        const failure = yield* Effect.flip(localServerUrl.pipe(withEnv({ PORT: port })))
        expect(failure._tag).toBe("UsageError")
        expect(failure.message).toContain(`PORT=${JSON.stringify(port)}`)
      }
    }))
})
