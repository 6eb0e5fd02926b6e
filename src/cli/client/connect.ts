import { Command, Options, Prompt } from "@effect/cli"
import { Effect, Option, Redacted } from "effect"
import { type Connection, removeConnection, writeConnection } from "./config.ts"
import { AnswerFailed, ServerUnreachable, UsageError } from "./exitCodes.ts"
import { fetchMe, isSuccess, parseBaseUrl, probe } from "./http.ts"
import { printPretty } from "./output.ts"
import { LOCAL_URL_HELP, localServerUrl, unreachableAdvice } from "./serverUrl.ts"

/** The first line of standard input (a key piped in: `echo $KEY | herald connect`). */
const readKeyLine = Effect.tryPromise({
  try: async () => {
    let text = ""
    for await (const chunk of process.stdin) {
      text += typeof chunk === "string" ? chunk : (chunk as Buffer).toString("utf8")
      if (text.includes("\n") || text.length > 4_096) break
    }
    return text.split("\n")[0]!.trim()
  },
  catch: (error) => new UsageError({ message: `cannot read the key from standard input: ${(error as Error).message}` })
})

/** The key typed at a hidden prompt on a terminal. */
const promptKey = Prompt.hidden({ message: "Secret key (sk_live_…)" }).pipe(
  Prompt.run,
  Effect.map((key) => Redacted.value(key).trim()),
  Effect.catchTag("QuitException", () => Effect.succeed(""))
)

/**
 * `herald connect [--url URL] [--key KEY]`: checks that a server answers at the URL (else it says
 * which URL it tried and what --url to give, and asks for nothing), then checks the key with GET
 * /api/v1/app/me and stores `{url, key}` (mode 0600); a refused key stores nothing. Without --key it asks at a hidden prompt
 * on a terminal, or reads one line from a pipe. Without --url it connects to the server on this
 * machine (port PORT, else 8080).
 */
export const connect = Command.make(
  "connect",
  {
    url: Options.text("url").pipe(
      Options.withDescription(`the Herald server's base URL (http or https). Default: ${LOCAL_URL_HELP}.`),
      Options.optional
    ),
    key: Options.redacted("key").pipe(
      Options.withDescription("the account's secret key (sk_live_…). When absent it is asked for at a hidden prompt, or read as the first line of a pipe."),
      Options.optional
    )
  },
  (input) =>
    Effect.gen(function*() {
      const url = yield* parseBaseUrl(Option.isSome(input.url) ? input.url.value : yield* localServerUrl)
      // Whether anything answers there, before asking for a key that could not be checked.
      yield* probe(url).pipe(
        Effect.catchAll((cause) =>
          Effect.flatMap(unreachableAdvice(url, Option.isSome(input.url), cause), (message) => new ServerUnreachable({ message }))
        )
      )
      const given = Option.isSome(input.key)
        ? Redacted.value(input.key.value).trim()
        : process.stdin.isTTY
        ? yield* promptKey
        : yield* readKeyLine
      if (given === "") return yield* new UsageError({ message: "no key given: pass --key, type it at the prompt or pipe it in" })
      const connection: Connection = { url, key: Redacted.make(given) }
      const { answer, me } = yield* fetchMe(url, connection.key)
      if (!isSuccess(answer.status)) {
        const code = typeof me?.code === "string" ? me.code : `http_${answer.status}`
        const why = typeof me?.message === "string" ? `: ${me.message}` : ""
        return yield* new AnswerFailed({
          status: answer.status,
          answerCode: code,
          message: answer.status === 401 ? `the key was refused${why}; nothing stored` : `the server answered ${answer.status}${why}; nothing stored`,
          printed: false
        })
      }
      const account = me?.account
      if (typeof account?.plan !== "string") {
        return yield* new AnswerFailed({
          status: answer.status,
          answerCode: "unexpected_answer",
          message: `${url} did not answer GET /api/v1/app/me as a Herald server does; nothing stored`,
          printed: false
        })
      }
      const path = yield* writeConnection(connection)
      yield* printPretty({ connected: true, url, account: { account_id: account.account_id, label: account.label, plan: account.plan }, config: path })
    })
).pipe(Command.withDescription("Check a secret key and store it with the server's URL for the other client commands"))

/** `herald disconnect`: removes the stored connection. */
export const disconnect = Command.make("disconnect", {}, () =>
  Effect.gen(function*() {
    const removed = yield* removeConnection()
    yield* printPretty({ disconnected: true, config: removed.path, removed: removed.existed })
  })).pipe(Command.withDescription("Remove the stored connection (its config file)"))
