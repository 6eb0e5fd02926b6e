import { Context, Duration, Effect, Layer, LogLevel, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { connect } from "nats"
import Pg from "pg"
import { AppConfig, type AppSettings } from "../../src/config/AppConfig.ts"
import { tracingOff } from "../../src/observability/tracingSettings.ts"

/** Where the test suite finds Postgres and NATS (the machine's services by default). */
export const PG_ADMIN_URL = process.env.TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
export const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222"

export interface Isolation {
  readonly id: string
  readonly database: string
  readonly databaseUrl: string
  readonly natsPrefix: string
}

/** A fresh name set for one test file: its own database and its own NATS prefix. */
export const makeIsolation = (): Isolation => {
  const id = randomBytes(5).toString("hex")
  const database = `herald_test_${id}`
  const url = new URL(PG_ADMIN_URL)
  url.pathname = `/${database}`
  return { id, database, databaseUrl: url.toString(), natsPrefix: `t${id}` }
}

const adminQuery = async (text: string) => {
  const client = new Pg.Client({ connectionString: PG_ADMIN_URL })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/** Drops the database and removes every stream (and KV bucket) under the prefix. */
export const cleanup = async (iso: Isolation) => {
  await adminQuery(`DROP DATABASE IF EXISTS "${iso.database}" WITH (FORCE)`)
  const nc = await connect({ servers: NATS_URL })
  try {
    const jsm = await nc.jetstreamManager()
    const upper = `${iso.natsPrefix.toUpperCase()}_`
    const kv = `KV_${iso.natsPrefix}_`
    for await (const name of jsm.streams.names()) {
      if (name.startsWith(upper) || name.startsWith(kv)) await jsm.streams.delete(name).catch(() => false)
    }
  } finally {
    await nc.close()
  }
}

export class IsolationTag extends Context.Tag("test/Isolation")<IsolationTag, Isolation>() {}

/** The file's isolation, created before its tests and removed after them. */
export const IsolationLive = Layer.scoped(
  IsolationTag,
  Effect.acquireRelease(Effect.sync(makeIsolation), (iso) =>
    Effect.promise(() => cleanup(iso)).pipe(Effect.timeout(Duration.seconds(20)), Effect.ignore))
)

export const settingsFor = (iso: Isolation, overrides: Partial<AppSettings> = {}): AppSettings => ({
  port: 0,
  databaseUrl: Redacted.make(iso.databaseUrl),
  natsServers: NATS_URL.split(","),
  natsReplicas: 1,
  natsAuth: { _tag: "none" },
  natsTls: Option.none(),
  natsPublishBudgetMs: 10_000,
  // Small: every node of every test file running at once shares the machine's Postgres and its
  // max_connections of 100 (a node holds its pool and one LISTEN connection).
  dbPool: 10,
  dbPreparedStatements: true,
  dbListenUrl: Option.none(),
  dbIdleInTransactionMs: 10_000,
  role: "all",
  partitions: 8,
  timerRecheckMs: 30_000,
  nodeId: `test-${iso.id}-${randomBytes(2).toString("hex")}`,
  natsPrefix: iso.natsPrefix,
  gatewayRbmUrl: Option.none(),
  gatewayWaUrl: Option.none(),
  gatewayCapiUrl: Option.none(),
  gatewaySimPort: 0,
  gatewayRbmClientToken: Redacted.make("test-rbm-client-token"),
  gatewayTimeoutMs: 10_000,
  gatewaySimDeliveredMs: 200,
  gatewaySimReadMs: 500,
  gatewaySimTransport: "http",
  gatewaySimCallbacks: true,
  messagePrice: 0.1,
  botThroughputDefault: 80,
  webhookAllowPrivate: true,
  webhookTimeoutMs: 10_000,
  webhookEndpointConcurrency: 16,
  webhookConcurrency: 1_024,
  webhookLaneBacklog: 256,
  logLevel: LogLevel.Warning,
  logFormat: "json",
  actorMaxAttempts: 5,
  actorConcurrency: 512,
  apiKeyRatePerSecond: 300,
  apiKeyRateBurst: 30,
  broadcastReportWindowMs: 60_000,
  httpBodyIdleMs: 10_000,
  importIdleMs: 30_000,
  gatewayWaToken: Redacted.make("test-wa-token"),
  gatewayWaVerifyToken: Redacted.make("test-wa-verify-token"),
  gatewayWaAppSecret: Redacted.make("test-wa-app-secret"),
  gatewaySimTemplateReviewMs: 300,
  mediaAllowHttp: false,
  waPrices: { MARKETING: 0.8, UTILITY: 0.12, AUTHENTICATION: 0.12 },
  waUnconfirmedExpiryMs: 86_400_000,
  secretsKey: Redacted.make("test-herald-secrets-key-0123456789abcdef"),
  secretsKeyPrevious: Option.none(),
  capiBatchWindowMs: 50,
  graphqlSubscriptionBuffer: 1_000,
  graphqlPingMs: 12_000,
  graphqlIdleMs: 300_000,
  capiRetryBaseMs: 100,
  capiMaxAttempts: 4,
  smtpUrl: Option.none(),
  smtpSimPort: 0,
  smtpFeedbackSecret: Redacted.make("test-smtp-feedback-secret"),
  publicUrl: Option.none(),
  emailRetryBaseMs: 200,
  consoleSessionHours: 12,
  opsToken: Option.none(),
  metricsPort: Option.none(),
  metricsToken: Option.none(),
  tracing: tracingOff,
  ...overrides
})

/** AppConfig for an in-process test, on the file's isolation. */
export const TestConfig = (overrides: Partial<AppSettings> = {}) =>
  Layer.effect(AppConfig, Effect.map(IsolationTag, (iso) => settingsFor(iso, overrides)))

/** Environment variables for a child `herald` process on the file's isolation. */
export const envFor = (iso: Isolation, overrides: Record<string, string> = {}): Record<string, string> => ({
  DATABASE_URL: iso.databaseUrl,
  NATS_URL,
  HERALD_NATS_PREFIX: iso.natsPrefix,
  HERALD_PARTITIONS: "8",
  // Small: every node of every test file running at once shares the machine's Postgres and its
  // max_connections of 100 (a node holds its pool and one LISTEN connection). Three files of four
  // nodes at the default 16 ran out of connections ("Failed to acquire connection", 503s, reports
  // late past the broadcast's window); at 6 a single node sending a broadcast while its reports
  // came in waited past the pool's 5 s for a connection (503 database unavailable).
  HERALD_DB_POOL: "10",
  WEBHOOK_ALLOW_PRIVATE: "true",
  // The in-process gateway simulator on any free port: test processes run side by side.
  GATEWAY_SIM_PORT: "0",
  SMTP_SIM_PORT: "0",
  LOG_FORMAT: "json",
  LOG_LEVEL: "info",
  ...overrides
})
