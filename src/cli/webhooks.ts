import { Command, Options } from "@effect/cli"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Config, Effect, Option, Redacted, Schema } from "effect"
import { InvalidRequest } from "../domain/errors.ts"
import { LOCAL_URL_HELP, localServerUrl } from "./client/serverUrl.ts"
import { withDefault } from "./help.ts"
import { printJson } from "./output.ts"

const Listed = Schema.Struct({ webhooks: Schema.Array(Schema.Struct({ webhook_id: Schema.String, url: Schema.String })) })
const Attempts = Schema.Struct({ deliveries: Schema.Array(Schema.Struct({ sent_at: Schema.String }, { key: Schema.String, value: Schema.Unknown })) })

const api = Options.text("url").pipe(
  Options.withDescription(`base URL of a Herald API node. Default: HERALD_API_URL when set, else ${LOCAL_URL_HELP}.`),
  Options.optional
)
const token = Options.redacted("token").pipe(
  Options.withDescription("a user token or API key. Required, unless HERALD_TOKEN holds it."),
  Options.withFallbackConfig(Config.redacted("HERALD_TOKEN"))
)
const limit = Options.integer("limit").pipe(Options.withDescription("rows per endpoint, at most 500"), withDefault(500))

/** Where the API is: --url, else HERALD_API_URL (unless empty), else the server on this machine. */
const apiBase = (given: Option.Option<string>) =>
  Option.match(given, {
    onSome: Effect.succeed,
    onNone: () =>
      Config.string("HERALD_API_URL").pipe(
        Config.option,
        Effect.orElseSucceed(() => Option.none<string>()),
        Effect.flatMap(Option.match({ onSome: (url) => (url === "" ? localServerUrl : Effect.succeed(url)), onNone: () => localServerUrl }))
      )
  }).pipe(Effect.map((url) => url.replace(/\/$/, "")))

/**
 * `herald webhooks attempts`: the attempt log across every endpoint, built by a client as the
 * contract's rule 4 says (there is no such endpoint): list the webhooks, read each endpoint's
 * deliveries in parallel, count a failed read as an empty list and mark the answer partial,
 * then sort every row by sent_at, newest first.
 */
const attempts = Command.make("attempts", { api, token, limit }, (input) =>
  Effect.gen(function*() {
    const base = yield* apiBase(input.api)
    const bearer = Redacted.value(input.token)
    if (bearer === "") return yield* InvalidRequest.single("--token", "is required (or HERALD_TOKEN)")
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest(HttpClientRequest.bearerToken(bearer)),
      HttpClient.filterStatusOk
    )
    const listed = yield* client.get(`${base}/api/v1/rcs/webhooks`).pipe(
      Effect.flatMap(HttpClientResponse.schemaBodyJson(Listed)),
      Effect.mapError((e) => new InvalidRequest({ message: `listing webhooks failed: ${e.message}`, errors: [] }))
    )
    const reads = yield* Effect.forEach(
      listed.webhooks,
      (webhook) =>
        client.get(`${base}/api/v1/rcs/webhooks/${webhook.webhook_id}/deliveries`, { urlParams: { limit: String(input.limit) } }).pipe(
          Effect.flatMap(HttpClientResponse.schemaBodyJson(Attempts)),
          Effect.map((body) => ({ webhook_id: webhook.webhook_id, rows: body.deliveries, failed: undefined as string | undefined })),
          Effect.catchAll((error) => Effect.succeed({ webhook_id: webhook.webhook_id, rows: [], failed: error.message }))
        ),
      { concurrency: 8 }
    )
    const rows = reads.flatMap((r) => r.rows.map((row) => ({ webhook_id: r.webhook_id, ...row })))
    rows.sort((a, b) => Date.parse(b.sent_at) - Date.parse(a.sent_at))
    const failed = reads.filter((r) => r.failed !== undefined).map((r) => ({ webhook_id: r.webhook_id, reason: r.failed }))
    yield* printJson({ partial: failed.length > 0, failed, attempts: rows })
  }).pipe(Effect.provide(FetchHttpClient.layer))).pipe(Command.withDescription("Every endpoint's delivery attempts, newest first (partial when a read failed)"))

export const webhooks = Command.make("webhooks").pipe(
  Command.withDescription("Webhook tools that work against a running API node"),
  Command.withSubcommands([attempts])
)
