import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { reportAnswer } from "./answer.ts"
import { readData } from "./body.ts"
import { readConnection } from "./config.ts"
import { UsageError } from "./exitCodes.ts"
import { apiUrl, type Method, send } from "./http.ts"
import { requiredArg } from "../help.ts"

const METHODS: ReadonlyArray<Method> = ["GET", "POST", "PUT", "PATCH", "DELETE"]
const WITH_BODY: ReadonlyArray<Method> = ["POST", "PUT", "PATCH"]

const parseMethod = (value: string) => {
  const method = METHODS.find((m) => m === value.toUpperCase())
  return method === undefined
    ? Effect.fail(new UsageError({ message: `METHOD must be GET, POST, PUT, PATCH or DELETE (got ${JSON.stringify(value)})` }))
    : Effect.succeed(method)
}

/**
 * `herald api METHOD PATH [--data JSON|@file|-]`: one call to the API with the connected key. The
 * answer is printed on stdout; the exit code tells 2xx (0) from an error answer (1). Multipart
 * uploads and server-sent events are out of its scope: large uploads have their own commands.
 */
export const api = Command.make(
  "api",
  {
    method: Args.text({ name: "METHOD" }).pipe(Args.withDescription("GET, POST, PUT, PATCH or DELETE (any case)"), requiredArg),
    path: Args.text({ name: "PATH" }).pipe(
      Args.withDescription("an API path, with or without /api/v1, with any query string: app/me, /api/v1/app/me?x=1"),
      requiredArg
    ),
    data: Options.text("data").pipe(
      Options.withDescription(
        "the JSON body: the text, @file or - for standard input; at most 10 MB. Required for POST, PUT and PATCH, refused for GET, optional for DELETE."
      ),
      Options.optional
    )
  },
  (input) =>
    Effect.gen(function*() {
      const method = yield* parseMethod(input.method)
      if (Option.isNone(input.data) && WITH_BODY.includes(method)) {
        return yield* new UsageError({ message: `${method} needs --data (JSON text, @file or - for standard input)` })
      }
      if (Option.isSome(input.data) && method === "GET") return yield* new UsageError({ message: "GET takes no --data" })
      const body = Option.isSome(input.data) ? yield* readData(input.data.value) : undefined
      const connection = yield* readConnection()
      const answer = yield* send({
        method,
        url: apiUrl(connection.url, input.path),
        key: connection.key,
        ...(body !== undefined ? { body, contentType: "application/json" } : {})
      })
      yield* reportAnswer(connection, answer)
    })
).pipe(Command.withDescription("Call the API with the connected key and print the answer (exit 0 for 2xx, 1 for an error answer)"))
