import { Terminal } from "@effect/platform"
import { Config, Console, Effect, Option } from "effect"
import { formatWithOptions } from "node:util"

/**
 * Whether `NO_COLOR` asks for no colour: set to anything but the empty string
 * (https://no-color.org).
 */
export const noColorRequested = Config.string("NO_COLOR").pipe(
  Config.option,
  Effect.orElseSucceed(() => Option.none<string>()),
  Effect.map((value) => Option.getOrElse(value, () => "") !== "")
)

/**
 * Colour on a stream only when it is a terminal and `NO_COLOR` is unset or empty. `FORCE_COLOR`
 * and `CI` are not read: a pipe or a file always gets plain text, as scripts expect.
 */
export const colourOn = (stream: NodeJS.WriteStream) =>
  Effect.map(noColorRequested, (noColor) => stream.isTTY === true && !noColor)

// Escape sequences: CSI (colours, cursor moves, erasing) and OSC (titles, links).
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g
// SGR alone: colours and text attributes.
const SGR = /\u001b\[[0-9;:]*m/g

/** `text` without any escape sequence. */
export const stripEscapes = (text: string) => (text.includes("\u001b") ? text.replace(ESCAPES, "") : text)

/** `text` without its colours (cursor moves are kept: a prompt on a terminal still redraws). */
export const stripColours = (text: string) => (text.includes("\u001b") ? text.replace(SGR, "") : text)

/** What a console call would print, as one string: formatted like console.log, objects uncoloured. */
const plainText = (args: ReadonlyArray<unknown>) => stripEscapes(formatWithOptions({ colors: false }, ...args))

/**
 * The Console every command prints through (@effect/cli's help and usage errors, the pretty
 * logger, our own lines), writing plain text to a stream that gets no colour: stdout for
 * log/info/debug/dir/table, stderr for error/warn/trace, as node's console splits them.
 */
const plainConsole = (base: Console.Console, colour: { readonly stdout: boolean; readonly stderr: boolean }): Console.Console => {
  const unsafe = base.unsafe
  const plain = (write: (...args: ReadonlyArray<unknown>) => void, coloured: boolean) =>
    coloured ? write : (...args: ReadonlyArray<unknown>) => write(plainText(args))
  const wrapped: Console.UnsafeConsole = {
    ...unsafe,
    log: plain(unsafe.log, colour.stdout),
    info: plain(unsafe.info, colour.stdout),
    debug: plain(unsafe.debug, colour.stdout),
    dir: colour.stdout ? unsafe.dir : (item: unknown) => unsafe.log(plainText([item])),
    table: colour.stdout ? unsafe.table : (data: unknown) => unsafe.log(plainText([data])),
    error: plain(unsafe.error, colour.stderr),
    warn: plain(unsafe.warn, colour.stderr),
    trace: plain(unsafe.trace, colour.stderr)
  }
  const effect = <A extends ReadonlyArray<any>>(f: (...args: A) => void) => (...args: A) => Effect.sync(() => f(...args))
  return {
    ...base,
    log: effect(wrapped.log),
    info: effect(wrapped.info),
    debug: effect(wrapped.debug),
    dir: effect(wrapped.dir),
    table: effect(wrapped.table),
    error: effect(wrapped.error),
    warn: effect(wrapped.warn),
    trace: effect(wrapped.trace),
    unsafe: wrapped
  }
}

/**
 * A prompt's Terminal: it draws on stderr, so that stdout keeps only the command's JSON even when
 * it is redirected, without colours when stderr gets none and without any escape sequence when
 * stderr is not a terminal.
 */
const promptTerminal = (base: Terminal.Terminal, colour: boolean): Terminal.Terminal => ({
  ...base,
  display: (text) =>
    Effect.async<void>((resume) => {
      const shown = process.stderr.isTTY !== true ? stripEscapes(text) : colour ? text : stripColours(text)
      process.stderr.write(shown, () => resume(Effect.void))
    })
})

/**
 * Runs a `herald` command line under the colour rule: colour only on a terminal and only without
 * `NO_COLOR`, on each of stdout and stderr separately, whoever prints (see plainConsole).
 */
export const withColourRule = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const colour = { stdout: yield* colourOn(process.stdout), stderr: yield* colourOn(process.stderr) }
    const console = yield* Effect.console
    return yield* self.pipe(
      Effect.withConsole(plainConsole(console, colour)),
      Effect.updateService(Terminal.Terminal, (terminal) => promptTerminal(terminal, colour.stderr))
    )
  })
