import { Args, Command, Options } from "@effect/cli"
import cliProgress from "cli-progress"
import { Effect, Option } from "effect"
import { createReadStream } from "node:fs"
import { stat } from "node:fs/promises"
import { extname } from "node:path"
import { Readable } from "node:stream"
import { reportAnswer } from "./answer.ts"
import { readConnection } from "./config.ts"
import { UsageError } from "./exitCodes.ts"
import { apiUrl, send } from "./http.ts"
import { progressSizes } from "./progressText.ts"
import { requiredArg } from "../help.ts"

type Format = "csv" | "ndjson"

const CONTENT_TYPES: Record<Format, string> = { csv: "text/csv", ndjson: "application/x-ndjson" }

/** The format --format names, else the one the file's extension names (.csv, .ndjson, .jsonl). */
const formatOf = (file: string, given: Option.Option<Format>) => {
  if (Option.isSome(given)) return Effect.succeed(given.value)
  const ext = extname(file).toLowerCase()
  if (ext === ".csv") return Effect.succeed<Format>("csv")
  if (ext === ".ndjson" || ext === ".jsonl") return Effect.succeed<Format>("ndjson")
  return Effect.fail(new UsageError({ message: `cannot tell the format of ${file} from its name: give --format csv or --format ndjson` }))
}

const sizeOf = (file: string) =>
  Effect.tryPromise({
    try: () => stat(file).then((s) => s.size),
    catch: (error) => new UsageError({ message: `cannot read ${file}: ${(error as Error).message}` })
  })

/** Bytes handed to the connection so far, for the progress bar. */
interface Progress {
  update(sent: number): void
}

/**
 * The file as a stream (never read whole: it can hold millions of rows), counting the bytes as
 * undici takes them; undici takes the next chunk only once the socket has room.
 */
const fileBody = (file: string, progress: Progress) => {
  async function* chunks() {
    let sent = 0
    for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) {
      sent += (chunk as Buffer).length
      progress.update(sent)
      yield chunk as Buffer
    }
  }
  return Readable.from(chunks(), { objectMode: false })
}

/** A progress bar on stderr when it is a terminal; nothing otherwise. Stopped with its scope. */
const progressBar = (size: number) =>
  Effect.acquireRelease(
    Effect.sync((): Progress & { stop(): void } => {
      if (process.stderr.isTTY !== true) return { update: () => undefined, stop: () => undefined }
      const bar = new cliProgress.SingleBar(
        {
          format: "Importing {bar} {percentage}% | {sizes} | ETA {eta_formatted}",
          hideCursor: true,
          stream: process.stderr
        },
        cliProgress.Presets.shades_classic
      )
      bar.start(size, 0, { sizes: progressSizes(0, size) })
      let stopped = false
      return {
        update: (sent) => bar.update(sent, { sizes: progressSizes(sent, size) }),
        stop: () => {
          if (stopped) return
          stopped = true
          bar.stop()
        }
      }
    }),
    (bar) => Effect.sync(() => bar.stop())
  )

/**
 * `herald contacts import FILE [--format csv|ndjson]`: streams the file to POST
 * /api/v1/app/contacts/import (customers upserted by phone) with a progress bar on a terminal,
 * and prints the import report.
 */
const importCommand = Command.make(
  "import",
  {
    file: Args.file({ name: "FILE", exists: "yes" }).pipe(
      Args.withDescription("CSV with a header row (phone required, name optional, other columns traits: numbers, true/false and ISO dates typed, a column headed like zip:text kept as text) or NDJSON (one POST /app/contacts body a line)"),
      requiredArg
    ),
    format: Options.choice("format", ["csv", "ndjson"] as const).pipe(
      Options.withDescription("the file's format. When absent, its extension tells: .csv, or .ndjson and .jsonl."),
      Options.optional
    )
  },
  (input) =>
    Effect.gen(function*() {
      const format = yield* formatOf(input.file, input.format)
      const size = yield* sizeOf(input.file)
      const connection = yield* readConnection()
      const answer = yield* Effect.scoped(Effect.gen(function*() {
        const bar = yield* progressBar(size)
        const answer = yield* send({
          method: "POST",
          url: apiUrl(connection.url, "app/contacts/import"),
          key: connection.key,
          body: fileBody(input.file, bar),
          contentType: CONTENT_TYPES[format],
          contentLength: size,
          // The report comes once every row is written: no limit on waiting for it.
          headersTimeoutMs: 0
        })
        bar.stop()
        return answer
      }))
      yield* reportAnswer(connection, answer)
    })
).pipe(Command.withDescription("Stream a CSV or NDJSON file of contacts into the account's customers and print the import report"))

export const contacts = Command.make("contacts").pipe(
  Command.withDescription("Upload files of contacts into the account's customers"),
  Command.withSubcommands([importCommand])
)
