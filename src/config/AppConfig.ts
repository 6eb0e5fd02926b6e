import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { Config, ConfigError, Context, Effect, Either, Layer, LogLevel, Option, Redacted } from "effect"
import type { LogFormat } from "../observability/Logging.ts"
import { tracingConfig, type TracingSettings } from "../observability/tracingSettings.ts"

export type Role = "all" | "api" | "worker"

export type NatsAuth =
  | { readonly _tag: "none" }
  | { readonly _tag: "userPassword"; readonly user: string; readonly password: Redacted.Redacted<string> }
  | { readonly _tag: "token"; readonly token: Redacted.Redacted<string> }
  | { readonly _tag: "credsFile"; readonly path: string }

export interface NatsTls {
  readonly caFile: Option.Option<string>
  readonly certFile: Option.Option<string>
  readonly keyFile: Option.Option<string>
}

/** Every setting of the process, read once at start and validated before anything else runs. */
export interface AppSettings {
  readonly port: number
  readonly databaseUrl: Redacted.Redacted<string>
  /** The NATS servers a node is given (NATS_URL: one URL or a comma-separated list), credentials taken out. */
  readonly natsServers: ReadonlyArray<string>
  /** Replicas of every stream and KV bucket Herald creates (1-5; 3 on a real cluster). */
  readonly natsReplicas: number
  /** NATS credentials: NATS_USER/NATS_PASSWORD, or the first URL's user:password@ (never logged). */
  readonly natsAuth: NatsAuth
  /** TLS to NATS: a CA file to trust, and a client certificate and key for mutual TLS. */
  readonly natsTls: Option.Option<NatsTls>
  /** How long a command's publish may be retried (a stream's leader moving) before the caller gets 503. */
  readonly natsPublishBudgetMs: number
  /** Postgres connections this node's pool holds at most (nodes × (pool + 1) must stay under max_connections). */
  readonly dbPool: number
  /** Hot statements as named prepared statements (off behind PgBouncer before 1.21 or without max_prepared_statements). */
  readonly dbPreparedStatements: boolean
  /** Where the change feed LISTENs: DATABASE_URL unless set (behind PgBouncer's transaction mode, Postgres itself). */
  readonly dbListenUrl: Option.Option<Redacted.Redacted<string>>
  /**
   * Postgres ends a session of this node idle inside a transaction for this long (0: the server's
   * own setting): a node frozen mid-transaction (paused, cut off) must not hold the locks that the
   * partitions' next owners wait on.
   */
  readonly dbIdleInTransactionMs: number
  readonly role: Role
  readonly partitions: number
  /** How often an owned partition reloads its durable timers, and looks for a fired one whose command was lost. */
  readonly timerRecheckMs: number
  readonly nodeId: string
  readonly natsPrefix: string
  readonly gatewayRbmUrl: Option.Option<string>
  readonly gatewayWaUrl: Option.Option<string>
  readonly gatewayCapiUrl: Option.Option<string>
  readonly gatewaySimPort: number
  /** Shared with RBM: callbacks carry X-Goog-Signature = HMAC-SHA512 of the body under it. */
  readonly gatewayRbmClientToken: Redacted.Redacted<string>
  /** How long a send waits for the gateway's answer before it counts as unconfirmed (DESIGN.md: 10 s). */
  readonly gatewayTimeoutMs: number
  /** The simulator's delivery and read callbacks, this long after the send (DESIGN.md: ~200 / ~500 ms). */
  readonly gatewaySimDeliveredMs: number
  readonly gatewaySimReadMs: number
  /** In-process simulator only: `http` (the real wire path, default) or `direct` (calls, no sockets). */
  readonly gatewaySimTransport: "http" | "direct"
  /** In-process simulator only: whether it calls back delivery and read reports. */
  readonly gatewaySimCallbacks: boolean
  /** Price of one confirmed message, in the account's currency (DESIGN.md: 0.10 INR). */
  readonly messagePrice: number
  /** Upstream throughput of a bot that has none set (DESIGN.md: 80 messages/s). */
  readonly botThroughputDefault: number
  readonly webhookAllowPrivate: boolean
  /** One webhook attempt's time limit (DESIGN.md: 10 s). */
  readonly webhookTimeoutMs: number
  /** Webhook requests in flight per endpoint, and in all, on one node. */
  readonly webhookEndpointConcurrency: number
  readonly webhookLaneBacklog: number
  readonly webhookConcurrency: number
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: LogFormat
  /** Tries of a failing actor command before it is parked in the poison table. */
  readonly actorMaxAttempts: number
  /** Actors processing at once on one node, over all kinds. */
  readonly actorConcurrency: number
  /** Requests per second per API key (the contract's 300), and the burst its bucket allows. */
  readonly apiKeyRatePerSecond: number
  readonly apiKeyRateBurst: number
  /**
   * How long a broadcast waits for the delivery report of a message whose send was not confirmed
   * (or that a stopped node had claimed) before it sends it again (a stopped node's) or fails it.
   */
  readonly broadcastReportWindowMs: number
  /** A request body (at most 10 MB) that sends nothing for this long is answered 408. */
  readonly httpBodyIdleMs: number
  /** A contact import's body that sends nothing for this long is answered 408, nothing imported. */
  readonly importIdleMs: number
  /** The WhatsApp Cloud API's access token (Bearer), for GATEWAY_WA_URL. */
  readonly gatewayWaToken: Redacted.Redacted<string>
  /** What Meta's webhook verification (GET) must present as hub.verify_token. */
  readonly gatewayWaVerifyToken: Redacted.Redacted<string>
  /** Meta's app secret: webhooks carry X-Hub-Signature-256 = HMAC-SHA256 of the body under it. */
  readonly gatewayWaAppSecret: Redacted.Redacted<string>
  /** The simulator approves or rejects a submitted WhatsApp template this long after it came. */
  readonly gatewaySimTemplateReviewMs: number
  /** Media URLs of WhatsApp messages may be http (development only; Meta fetches them). */
  readonly mediaAllowHttp: boolean
  /** Price of one delivered WhatsApp template message, per category (service messages are free). */
  readonly waPrices: { readonly MARKETING: number; readonly UTILITY: number; readonly AUTHENTICATION: number }
  /** A WhatsApp send whose answer was lost fails after this long without a status webhook (24 h). */
  readonly waUnconfirmedExpiryMs: number
  /** The key sealing secrets Herald must read back (a CAPI access token): AES-256-GCM under a key derived from it. */
  readonly secretsKey: Redacted.Redacted<string>
  /**
   * The key secrets were sealed with before HERALD_SECRETS_KEY was rotated: it only opens (nothing
   * is sealed with it), and each node re-seals under HERALD_SECRETS_KEY at start what it opens.
   */
  readonly secretsKeyPrevious: Option.Option<Redacted.Redacted<string>>
  /** A capi actor waits this long after an event for more to batch with it. */
  readonly capiBatchWindowMs: number
  /** The first retry of a failed CAPI forward waits this long; each later one twice as long (up to 5 minutes). */
  readonly capiRetryBaseMs: number
  /** Tries of one batch before its events fail (a dead end, listed, and redriven with POST …/capi/events/redrive). */
  readonly capiMaxAttempts: number
  /** Events one GraphQL subscription may hold for a client reading too slowly before the client is dropped. */
  readonly graphqlSubscriptionBuffer: number
  /** A GraphQL socket is pinged this often and cut off when it has not answered the last ping by the next (graphql-ws's keep-alive). */
  readonly graphqlPingMs: number
  /** A GraphQL socket running no operation for this long is closed (1000): idle sockets are not kept forever. */
  readonly graphqlIdleMs: number
  /** Where partner e-mail is relayed (smtp:// or smtps://); unset on a single-process node: the SMTP sink in-process. */
  readonly smtpUrl: Option.Option<string>
  /** The in-process SMTP sink listens here (0 picks a free port). */
  readonly smtpSimPort: number
  /** The SMTP sink signs its bounce and complaint reports to Herald with HMAC-SHA256 under this. */
  readonly smtpFeedbackSecret: Redacted.Redacted<string>
  /** The base of absolute URLs Herald hands out (e-mail verification links); default http://127.0.0.1:<PORT>. */
  readonly publicUrl: Option.Option<string>
  /** A soft-bounced recipient (4xx) is tried again after this, then 3× and 9× as long (3 retries in about a minute by default). */
  readonly emailRetryBaseMs: number
  /** How long a console sign-in lasts (docs/console.md). */
  readonly consoleSessionHours: number
  /** The operator view's token (/console/ops); none: the view is off. */
  readonly opsToken: Option.Option<Redacted.Redacted<string>>
  /** GET /metrics on a listener of its own on this port (0: any free port); none: not on a port of its own. */
  readonly metricsPort: Option.Option<number>
  /** The bearer token /metrics asks for, on whichever port it is served; on PORT it is served only with one. */
  readonly metricsToken: Option.Option<Redacted.Redacted<string>>
  /** OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT and OpenTelemetry's other variables); off unless an endpoint is set. */
  readonly tracing: TracingSettings
}

const url = (name: string, protocols: ReadonlyArray<string>) =>
  Config.string(name).pipe(
    Config.validate({
      message: `must be a URL with scheme ${protocols.join(" or ")}`,
      validation: (value) => {
        try {
          return protocols.includes(new URL(value).protocol.replace(/:$/, ""))
        } catch {
          return false
        }
      }
    })
  )

const integerIn = (name: string, min: number, max: number) =>
  Config.integer(name).pipe(
    Config.validate({
      message: `must be an integer from ${min} to ${max}`,
      validation: (n) => n >= min && n <= max
    })
  )

// NATS names (streams, consumers, KV buckets) accept only these characters, and the prefix is the
// first token of every subject, so it must not contain dots or wildcards either.
const natsPrefix = Config.string("HERALD_NATS_PREFIX").pipe(
  Config.validate({
    message: "must be 1-32 characters of letters, digits, '_' or '-'",
    validation: (s) => /^[A-Za-z0-9_-]{1,32}$/.test(s)
  }),
  Config.withDefault("herald")
)

const nodeId = Config.string("HERALD_NODE_ID").pipe(
  Config.validate({
    message: "must be 1-64 characters of letters, digits, '_', '-' or '.'",
    validation: (s) => /^[A-Za-z0-9_.-]{1,64}$/.test(s)
  }),
  Config.option,
  Config.map(Option.getOrElse(() => `${hostname().replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 40)}-${randomBytes(4).toString("hex")}`))
)

const logLevel = Config.string("LOG_LEVEL").pipe(
  Config.mapOrFail((raw) => {
    const level = LogLevel.allLevels.find((l) => l.label.toLowerCase() === raw.toLowerCase() || l._tag.toLowerCase() === raw.toLowerCase())
    return level
      ? Either.right(level)
      : Either.left(ConfigError.InvalidData(["LOG_LEVEL"], "must be one of trace, debug, info, warning, error, fatal, none"))
  }),
  Config.withDefault(LogLevel.Info)
)

const price = (name: string, fallback: number) =>
  Config.number(name).pipe(
    Config.validate({ message: "must be a number from 0 to 1000000", validation: (n) => n >= 0 && n <= 1_000_000 }),
    Config.withDefault(fallback)
  )

// Development defaults, as the simulator uses them: a production node refuses to start with them
// (anyone who read this file could forge Meta's webhooks).
export const DEV_WA_TOKEN = "dev-wa-token"
export const DEV_WA_VERIFY_TOKEN = "dev-wa-verify-token"
export const DEV_WA_APP_SECRET = "dev-wa-app-secret"
export const DEV_SECRETS_KEY = "dev-herald-secrets-key-not-for-production"
export const DEV_SMTP_FEEDBACK_SECRET = "dev-herald-smtp-feedback-secret"

const NATS_SCHEMES = ["nats", "tls", "ws", "wss"]

/** One NATS URL, checked, without the credentials it may carry (those go to `natsAuth`). */
const parseNatsUrl = (raw: string): URL | undefined => {
  try {
    const parsed = new URL(raw.trim())
    return NATS_SCHEMES.includes(parsed.protocol.replace(/:$/, "")) && parsed.hostname !== "" ? parsed : undefined
  } catch {
    return undefined
  }
}

const splitUrls = (value: string) => value.split(",").map((s) => s.trim()).filter((s) => s !== "")

// Validated as the variable's text, so the error names NATS_URL; then split.
const rawNatsUrls = Config.string("NATS_URL").pipe(
  Config.validate({
    message: `must be a URL with scheme ${NATS_SCHEMES.join(", ")}, or a comma-separated list of them (nats://n1:4222,nats://n2:4222,nats://n3:4222)`,
    validation: (value) => splitUrls(value).length > 0 && splitUrls(value).every((u) => parseNatsUrl(u) !== undefined)
  }),
  Config.withDefault("nats://127.0.0.1:4222"),
  Config.map(splitUrls)
)

// nats.js does not read credentials out of a server URL: they are taken out here, so they are
// neither sent as part of a host nor ever logged with one.
const natsServers = Config.map(rawNatsUrls, (urls) =>
  urls.map((raw) => {
    const parsed = parseNatsUrl(raw)!
    parsed.username = ""
    parsed.password = ""
    return parsed.toString().replace(/\/$/, "")
  }))

const natsAuth: Config.Config<NatsAuth> = Config.all({
  urls: rawNatsUrls,
  user: Config.option(Config.string("NATS_USER")),
  password: Config.option(Config.redacted("NATS_PASSWORD")),
  token: Config.option(Config.redacted("NATS_TOKEN")),
  creds: Config.option(Config.string("NATS_CREDS"))
}).pipe(
  Config.mapOrFail(({ creds, password, token, urls, user }): Either.Either<NatsAuth, ConfigError.ConfigError> => {
    const given = [Option.isSome(user) || Option.isSome(password), Option.isSome(token), Option.isSome(creds)].filter(Boolean).length
    if (given > 1) return Either.left(ConfigError.InvalidData(["NATS_USER"], "set one of NATS_USER/NATS_PASSWORD, NATS_TOKEN or NATS_CREDS"))
    if (Option.isSome(creds)) return Either.right({ _tag: "credsFile", path: creds.value })
    if (Option.isSome(token)) return Either.right({ _tag: "token", token: token.value })
    if (Option.isSome(user) !== Option.isSome(password)) {
      return Either.left(ConfigError.InvalidData([Option.isSome(user) ? "NATS_PASSWORD" : "NATS_USER"], "NATS_USER and NATS_PASSWORD go together"))
    }
    if (Option.isSome(user) && Option.isSome(password)) return Either.right({ _tag: "userPassword", user: user.value, password: password.value })
    // Credentials in the URL (the first one carrying any): nats://user:password@host, or nats://token@host.
    for (const raw of urls) {
      const parsed = parseNatsUrl(raw)!
      if (parsed.username === "") continue
      const name = decodeURIComponent(parsed.username)
      return Either.right(
        parsed.password === ""
          ? { _tag: "token", token: Redacted.make(name) }
          : { _tag: "userPassword", user: name, password: Redacted.make(decodeURIComponent(parsed.password)) }
      )
    }
    return Either.right({ _tag: "none" })
  })
)

const natsTls: Config.Config<Option.Option<NatsTls>> = Config.all({
  caFile: Config.option(Config.string("NATS_TLS_CA")),
  certFile: Config.option(Config.string("NATS_TLS_CERT")),
  keyFile: Config.option(Config.string("NATS_TLS_KEY"))
}).pipe(
  Config.mapOrFail((tls) =>
    Option.isSome(tls.certFile) !== Option.isSome(tls.keyFile)
      ? Either.left(ConfigError.InvalidData([Option.isSome(tls.certFile) ? "NATS_TLS_KEY" : "NATS_TLS_CERT"], "NATS_TLS_CERT and NATS_TLS_KEY go together"))
      : Either.right(Option.isNone(tls.caFile) && Option.isNone(tls.certFile) ? Option.none() : Option.some(tls))
  )
)

const optionalUrl = (name: string) => Config.option(url(name, ["http", "https"]))

/** A secret token a client must present; empty is unset (a compose file's `${NAME:-}`). */
const optionalToken = (name: string) =>
  // Validated before the default, so that the error names the variable.
  Config.string(name).pipe(
    Config.validate({ message: "must be at least 32 characters (e.g. openssl rand -base64 32), or empty", validation: (token) => token === "" || token.length >= 32 }),
    Config.withDefault(""),
    Config.map((token) => (token === "" ? Option.none() : Option.some(Redacted.make(token))))
  )

const allSettings: Config.Config<AppSettings> = Config.all({
  port: integerIn("PORT", 0, 65535).pipe(Config.withDefault(8080)),
  // Validated as a plain string (so the error can say what is wrong), then kept redacted: it may
  // carry a password, and a Redacted value never prints.
  databaseUrl: url("DATABASE_URL", ["postgres", "postgresql"]).pipe(
    Config.withDefault("postgres://postgres@127.0.0.1:5432/herald"),
    Config.map(Redacted.make)
  ),
  natsServers: natsServers,
  natsReplicas: integerIn("HERALD_NATS_REPLICAS", 1, 5).pipe(Config.withDefault(1)),
  natsAuth,
  natsTls,
  natsPublishBudgetMs: integerIn("HERALD_NATS_PUBLISH_BUDGET_MS", 100, 120_000).pipe(Config.withDefault(10_000)),
  dbPool: integerIn("HERALD_DB_POOL", 2, 1_000).pipe(Config.withDefault(16)),
  dbPreparedStatements: Config.boolean("HERALD_DB_PREPARED_STATEMENTS").pipe(Config.withDefault(true)),
  dbListenUrl: url("HERALD_DB_LISTEN_URL", ["postgres", "postgresql"]).pipe(Config.map(Redacted.make), Config.option),
  dbIdleInTransactionMs: integerIn("HERALD_DB_IDLE_IN_TRANSACTION_MS", 0, 3_600_000).pipe(Config.withDefault(10_000)),
  role: Config.literal("all", "api", "worker")("HERALD_ROLE").pipe(Config.withDefault("all" as const)),
  partitions: integerIn("HERALD_PARTITIONS", 1, 4096).pipe(Config.withDefault(32)),
  timerRecheckMs: integerIn("HERALD_TIMER_RECHECK_MS", 100, 600_000).pipe(Config.withDefault(30_000)),
  nodeId,
  natsPrefix,
  gatewayRbmUrl: optionalUrl("GATEWAY_RBM_URL"),
  gatewayWaUrl: optionalUrl("GATEWAY_WA_URL"),
  gatewayCapiUrl: optionalUrl("GATEWAY_CAPI_URL"),
  gatewaySimPort: integerIn("GATEWAY_SIM_PORT", 0, 65535).pipe(Config.withDefault(8090)),
  // A development default, like RBM's sandbox: production sets its own (and logs never show it).
  gatewayRbmClientToken: Config.string("GATEWAY_RBM_CLIENT_TOKEN").pipe(
    Config.withDefault("herald-dev-rbm-client-token"),
    Config.map(Redacted.make)
  ),
  gatewayTimeoutMs: integerIn("GATEWAY_TIMEOUT_MS", 100, 120_000).pipe(Config.withDefault(10_000)),
  gatewaySimDeliveredMs: integerIn("GATEWAY_SIM_DELIVERED_MS", 0, 600_000).pipe(Config.withDefault(200)),
  gatewaySimReadMs: integerIn("GATEWAY_SIM_READ_MS", 0, 600_000).pipe(Config.withDefault(500)),
  gatewaySimTransport: Config.literal("http", "direct")("GATEWAY_SIM_TRANSPORT").pipe(Config.withDefault("http" as const)),
  gatewaySimCallbacks: Config.boolean("GATEWAY_SIM_CALLBACKS").pipe(Config.withDefault(true)),
  messagePrice: Config.number("HERALD_MESSAGE_PRICE").pipe(
    Config.validate({ message: "must be a number from 0 to 1000000", validation: (n) => n >= 0 && n <= 1_000_000 }),
    Config.withDefault(0.1)
  ),
  botThroughputDefault: integerIn("HERALD_BOT_THROUGHPUT", 1, 1_000_000).pipe(Config.withDefault(80)),
  webhookAllowPrivate: Config.boolean("WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
  webhookTimeoutMs: integerIn("HERALD_WEBHOOK_TIMEOUT_MS", 100, 120_000).pipe(Config.withDefault(10_000)),
  webhookEndpointConcurrency: integerIn("HERALD_WEBHOOK_ENDPOINT_CONCURRENCY", 1, 1_000).pipe(Config.withDefault(16)),
  webhookConcurrency: integerIn("HERALD_WEBHOOK_CONCURRENCY", 1, 100_000).pipe(Config.withDefault(1_024)),
  webhookLaneBacklog: integerIn("HERALD_WEBHOOK_LANE_BACKLOG", 1, 100_000).pipe(Config.withDefault(256)),
  logLevel,
  actorMaxAttempts: integerIn("HERALD_ACTOR_MAX_ATTEMPTS", 1, 100).pipe(Config.withDefault(5)),
  actorConcurrency: integerIn("HERALD_ACTOR_CONCURRENCY", 1, 100_000).pipe(Config.withDefault(512)),
  apiKeyRatePerSecond: integerIn("HERALD_API_KEY_RATE", 1, 10_000_000).pipe(Config.withDefault(300)),
  apiKeyRateBurst: integerIn("HERALD_API_KEY_BURST", 1, 10_000_000).pipe(Config.withDefault(30)),
  broadcastReportWindowMs: integerIn("HERALD_BROADCAST_REPORT_WINDOW_MS", 0, 86_400_000).pipe(Config.withDefault(60_000)),
  httpBodyIdleMs: integerIn("HERALD_HTTP_BODY_IDLE_MS", 100, 600_000).pipe(Config.withDefault(10_000)),
  importIdleMs: integerIn("HERALD_IMPORT_IDLE_MS", 100, 3_600_000).pipe(Config.withDefault(30_000)),
  gatewayWaToken: Config.string("GATEWAY_WA_TOKEN").pipe(Config.withDefault(DEV_WA_TOKEN), Config.map(Redacted.make)),
  gatewayWaVerifyToken: Config.string("GATEWAY_WA_VERIFY_TOKEN").pipe(Config.withDefault(DEV_WA_VERIFY_TOKEN), Config.map(Redacted.make)),
  gatewayWaAppSecret: Config.string("GATEWAY_WA_APP_SECRET").pipe(Config.withDefault(DEV_WA_APP_SECRET), Config.map(Redacted.make)),
  gatewaySimTemplateReviewMs: integerIn("GATEWAY_SIM_TEMPLATE_REVIEW_MS", 0, 600_000).pipe(Config.withDefault(1_000)),
  mediaAllowHttp: Config.boolean("HERALD_MEDIA_ALLOW_HTTP").pipe(Config.withDefault(false)),
  waPrices: Config.all({
    MARKETING: price("HERALD_WA_PRICE_MARKETING", 0.8),
    UTILITY: price("HERALD_WA_PRICE_UTILITY", 0.12),
    AUTHENTICATION: price("HERALD_WA_PRICE_AUTHENTICATION", 0.12)
  }),
  waUnconfirmedExpiryMs: integerIn("HERALD_WA_UNCONFIRMED_EXPIRY_MS", 1_000, 7 * 86_400_000).pipe(Config.withDefault(86_400_000)),
  secretsKey: Config.string("HERALD_SECRETS_KEY").pipe(
    Config.validate({ message: "must be at least 32 characters (e.g. openssl rand -base64 32)", validation: (key) => key.length >= 32 }),
    Config.withDefault(DEV_SECRETS_KEY),
    Config.map(Redacted.make)
  ),
  // Empty is unset, as for HERALD_OPS_TOKEN (a compose file's `${HERALD_SECRETS_KEY_PREVIOUS:-}`).
  secretsKeyPrevious: Config.string("HERALD_SECRETS_KEY_PREVIOUS").pipe(
    // Validated before the default so that an error names the variable.
    Config.validate({ message: "must be at least 32 characters (the HERALD_SECRETS_KEY it replaces), or empty", validation: (key) => key === "" || key.length >= 32 }),
    Config.withDefault(""),
    Config.map((key) => (key === "" ? Option.none() : Option.some(Redacted.make(key))))
  ),
  capiBatchWindowMs: integerIn("HERALD_CAPI_BATCH_WINDOW_MS", 0, 60_000).pipe(Config.withDefault(200)),
  capiRetryBaseMs: integerIn("HERALD_CAPI_RETRY_BASE_MS", 10, 600_000).pipe(Config.withDefault(1_000)),
  capiMaxAttempts: integerIn("HERALD_CAPI_MAX_ATTEMPTS", 1, 100).pipe(Config.withDefault(12)),
  graphqlSubscriptionBuffer: integerIn("HERALD_GRAPHQL_SUBSCRIPTION_BUFFER", 1, 1_000_000).pipe(Config.withDefault(1_000)),
  graphqlPingMs: integerIn("HERALD_GRAPHQL_PING_MS", 100, 600_000).pipe(Config.withDefault(12_000)),
  graphqlIdleMs: integerIn("HERALD_GRAPHQL_IDLE_MS", 100, 86_400_000).pipe(Config.withDefault(300_000)),
  smtpUrl: url("SMTP_URL", ["smtp", "smtps"]).pipe(Config.option),
  smtpSimPort: integerIn("SMTP_SIM_PORT", 0, 65535).pipe(Config.withDefault(2525)),
  smtpFeedbackSecret: Config.string("SMTP_FEEDBACK_SECRET").pipe(Config.withDefault(DEV_SMTP_FEEDBACK_SECRET), Config.map(Redacted.make)),
  publicUrl: url("HERALD_PUBLIC_URL", ["http", "https"]).pipe(Config.map((u) => u.replace(/\/+$/, "")), Config.option),
  emailRetryBaseMs: integerIn("HERALD_EMAIL_RETRY_BASE_MS", 10, 600_000).pipe(Config.withDefault(5_000)),
  consoleSessionHours: integerIn("HERALD_CONSOLE_SESSION_HOURS", 1, 168).pipe(Config.withDefault(12)),
  // Empty is unset (a compose file's `${HERALD_OPS_TOKEN:-}`): the view is off.
  opsToken: optionalToken("HERALD_OPS_TOKEN"),
  metricsPort: Config.string("METRICS_PORT").pipe(
    Config.validate({
      message: "must be an integer from 0 to 65535 (0: any free port), or empty",
      validation: (port) => port.trim() === "" || (/^\d{1,5}$/.test(port.trim()) && Number(port) <= 65535)
    }),
    Config.withDefault(""),
    Config.map((port) => (port.trim() === "" ? Option.none() : Option.some(Number(port))))
  ),
  metricsToken: optionalToken("METRICS_TOKEN"),
  tracing: tracingConfig,
  logFormat: Config.literal("json", "pretty")("LOG_FORMAT").pipe(
    Config.option,
    Config.map(Option.getOrElse((): LogFormat => (process.stdout.isTTY ? "pretty" : "json")))
  )
})

/**
 * Development-only defaults a production node must not run with: Meta's webhooks would be
 * forgeable, sealed secrets readable; and without its public URL (the default is
 * http://127.0.0.1:PORT) the console's cookies would not be Secure and links would point nowhere.
 */
const productionProblems = (settings: AppSettings): ReadonlyArray<string> => [
  ...[
    ["GATEWAY_WA_APP_SECRET", settings.gatewayWaAppSecret, DEV_WA_APP_SECRET],
    ["GATEWAY_WA_VERIFY_TOKEN", settings.gatewayWaVerifyToken, DEV_WA_VERIFY_TOKEN],
    ["HERALD_SECRETS_KEY", settings.secretsKey, DEV_SECRETS_KEY],
    ["SMTP_FEEDBACK_SECRET", settings.smtpFeedbackSecret, DEV_SMTP_FEEDBACK_SECRET]
  ].filter(([, value, dev]) => Redacted.value(value as Redacted.Redacted<string>) === dev).map(([name]) => name as string),
  ...(Option.isNone(settings.publicUrl) ? ["HERALD_PUBLIC_URL"] : [])
]

export const settingsConfig: Config.Config<AppSettings> = Config.all([
  allSettings,
  Config.string("NODE_ENV").pipe(Config.withDefault("development"))
]).pipe(
  Config.mapOrFail(([settings, env]) => {
    const problems = env === "production" ? productionProblems(settings) : []
    return problems.length === 0
      ? Either.right(settings)
      : Either.left(
        problems.map((name) => ConfigError.InvalidData([name], "must be set to a real value when NODE_ENV=production (the default is for development)"))
          .reduce((all, one) => ConfigError.And(all, one))
      )
  })
)

export class AppConfig extends Context.Tag("herald/AppConfig")<AppConfig, AppSettings>() {
  static readonly layer = Layer.effect(AppConfig, settingsConfig)
  static readonly make = (settings: AppSettings) => Layer.succeed(AppConfig, settings)
}

/**
 * One line per wrong setting, naming the variable and what is wrong with it. Effect's own
 * rendering nests And/Or trees; an operator reading a crash-looping container wants the variable.
 */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  const lines = new Set<string>()
  const walk = (e: ConfigError.ConfigError): void => {
    switch (e._op) {
      case "And":
      case "Or":
        walk(e.left)
        walk(e.right)
        return
      case "InvalidData":
      case "MissingData":
      case "SourceUnavailable":
      case "Unsupported":
        lines.add(`${e.path.join(".") || "configuration"}: ${e.message}`)
    }
  }
  walk(error)
  return [...lines].join("; ")
}

export const loadSettings: Effect.Effect<AppSettings, ConfigError.ConfigError> = settingsConfig
