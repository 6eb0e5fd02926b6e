import { Effect } from "effect"
import { printParseErrorCode, visit } from "jsonc-parser"
import { open } from "node:fs/promises"
import { UsageError } from "./exitCodes.ts"

/** The largest `--data` body: 10 MB (10 × 1024 × 1024 bytes). Larger uploads have their own commands. */
export const MAX_DATA_BYTES = 10 * 1024 * 1024

const tooLarge = (what: string) =>
  new UsageError({ message: `${what} is over 10 MB (${MAX_DATA_BYTES} bytes); use herald contacts import for large uploads` })

/** Standard input to its end, refused as soon as it passes the limit (the rest is never read). */
const readStdin = Effect.tryPromise({
  try: async () => {
    const chunks: Array<Buffer> = []
    let size = 0
    for await (const chunk of process.stdin) {
      const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer)
      size += buffer.length
      if (size > MAX_DATA_BYTES) {
        process.stdin.destroy()
        return undefined
      }
      chunks.push(buffer)
    }
    return Buffer.concat(chunks)
  },
  catch: (error) => new UsageError({ message: `--data -: cannot read standard input: ${(error as Error).message}` })
}).pipe(Effect.flatMap((buffer) => (buffer === undefined ? Effect.fail(tooLarge("--data -")) : Effect.succeed(buffer))))

/** A file's bytes, its size checked first (a larger one is never read). */
const readDataFile = (path: string) =>
  Effect.tryPromise({
    try: async () => {
      const handle = await open(path, "r")
      try {
        const { size } = await handle.stat()
        return size > MAX_DATA_BYTES ? undefined : await handle.readFile()
      } finally {
        await handle.close()
      }
    },
    catch: (error) => new UsageError({ message: `--data @${path}: cannot read the file: ${(error as Error).message}` })
  }).pipe(Effect.flatMap((buffer) => (buffer === undefined ? Effect.fail(tooLarge(`--data @${path}`)) : Effect.succeed(buffer))))

/**
 * Why `text` is not JSON, with the position of the fault (V8 names it for most faults; for the
 * rest, the first error jsonc-parser's strict scan finds), or undefined when it is JSON.
 */
export const jsonFault = (text: string): string | undefined => {
  try {
    JSON.parse(text)
    return undefined
  } catch (error) {
    const message = (error as Error).message
    if (/ at position \d+/.test(message)) return message
    if (/^Unexpected end of JSON input/.test(message)) return `Unexpected end of JSON input at position ${text.length}`
    let found: { code: number; offset: number } | undefined
    visit(text, { onError: (code, offset) => void (found ??= { code, offset }) }, {
      disallowComments: true,
      allowTrailingComma: false,
      allowEmptyContent: false
    })
    if (found === undefined) return `${message.split(",")[0]}`
    const what = printParseErrorCode(found.code as Parameters<typeof printParseErrorCode>[0]).replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()
    return `${what[0]!.toUpperCase()}${what.slice(1)} at position ${found.offset}`
  }
}

/**
 * The `--data` body: the text itself, `@file` or `-` (standard input); at most 10 MB and JSON,
 * both checked before anything is sent.
 */
export const readData = (data: string) =>
  Effect.gen(function*() {
    const bytes = data === "-" ? yield* readStdin : data.startsWith("@") ? yield* readDataFile(data.slice(1)) : Buffer.from(data, "utf8")
    if (bytes.length > MAX_DATA_BYTES) return yield* tooLarge("--data")
    const text = bytes.toString("utf8")
    const fault = jsonFault(text)
    if (fault !== undefined) return yield* new UsageError({ message: `--data is not JSON: ${fault}` })
    return text
  })
