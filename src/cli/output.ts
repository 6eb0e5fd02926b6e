import { Console, Effect } from "effect"

/** Commands print exactly one JSON document on stdout, for scripts to parse. */
export const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** A failed command prints `{success:false, code, message}` on stderr and exits non-zero. */
export const printFailure = (code: string, message: string) =>
  Effect.zipRight(Console.error(JSON.stringify({ success: false, code, message })), Effect.sync(() => {
    process.exitCode = 1
  }))
