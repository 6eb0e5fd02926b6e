import { Effect } from "effect"
import pc from "picocolors"
import { colourOn } from "../colour.ts"
import type { ClientFailure } from "./exitCodes.ts"

// One JSON token of JSON.stringify's output: a string (a key when a colon follows), a literal or a number.
const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|\b(true|false|null)\b|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g

/**
 * `value` as JSON indented by 2 spaces; with `colour`, keys, strings, numbers and literals coloured
 * (picocolors' own detection is not used: it would colour a pipe under `CI` or `FORCE_COLOR`).
 */
export const renderJson = (value: unknown, colour: boolean): string => {
  const text = JSON.stringify(value, null, 2) ?? "null"
  if (!colour) return text
  const c = pc.createColors(true)
  return text.replace(TOKEN, (match, string: string | undefined, colon: string | undefined, literal: string | undefined) => {
    if (string !== undefined) return colon !== undefined ? c.cyan(string) + colon : c.green(string)
    if (literal !== undefined) return literal === "null" ? c.dim(literal) : c.magenta(literal)
    return c.yellow(match)
  })
}

/** Writes to stdout and waits until the chunk is handed to the OS (large answers to a pipe). */
export const writeStdout = (chunk: string | Uint8Array) =>
  Effect.async<void>((resume) => {
    process.stdout.write(chunk, () => resume(Effect.void))
  })

/** Prints `value` as pretty JSON on stdout, coloured on a terminal. */
export const printPretty = (value: unknown) =>
  Effect.flatMap(colourOn(process.stdout), (colour) => writeStdout(renderJson(value, colour) + "\n"))

/** One line on stderr. */
export const printError = (line: string) => Effect.sync(() => void process.stderr.write(line + "\n"))

/**
 * A client command's failure: `{success:false, code, message}` on stderr, as every herald command
 * prints its failures (unless the server's answer was already printed), and its exit code.
 */
export const reportClientFailure = (failure: ClientFailure) =>
  Effect.zipRight(
    failure._tag === "AnswerFailed" && failure.printed
      ? Effect.void
      : printError(JSON.stringify({ success: false, code: failure.code, message: failure.message })),
    Effect.sync(() => {
      process.exitCode = failure.exitCode
    })
  )
