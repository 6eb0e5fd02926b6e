import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, LogLevel, Option, Redacted } from "effect"
import { describeConfigError, loadSettings } from "../../src/config/AppConfig.ts"

const load = (env: Record<string, string>) =>
  loadSettings.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either)

describe("AppConfig", () => {
  it.effect("uses the defaults of DESIGN.md when nothing is set", () =>
    Effect.gen(function*() {
      const settings = Either.getOrThrow(yield* load({ LOG_FORMAT: "json" }))
      expect(settings.port).toBe(8080)
      expect(Redacted.value(settings.databaseUrl)).toBe("postgres://postgres@127.0.0.1:5432/herald")
      expect(settings.natsServers).toEqual(["nats://127.0.0.1:4222"])
      expect(settings.natsReplicas).toBe(1)
      expect(settings.natsAuth).toEqual({ _tag: "none" })
      expect(settings.dbPool).toBe(16)
      expect(settings.dbPreparedStatements).toBe(true)
      expect(settings.role).toBe("all")
      expect(settings.partitions).toBe(32)
      expect(settings.natsPrefix).toBe("herald")
      expect(settings.nodeId).toMatch(/^[A-Za-z0-9_.-]+$/)
      expect(settings.gatewayRbmUrl).toEqual(Option.none())
      expect(settings.gatewaySimPort).toBe(8090)
      expect(settings.webhookAllowPrivate).toBe(false)
      expect(settings.logLevel).toEqual(LogLevel.Info)
      // Metrics are served by no port until one of their settings says where and how.
      expect(settings.metricsPort).toEqual(Option.none())
      expect(settings.metricsToken).toEqual(Option.none())
    }))

  it.effect("reads the metrics port and token; empty is unset", () =>
    Effect.gen(function*() {
      const token = "m".repeat(32)
      const set = Either.getOrThrow(yield* load({ METRICS_PORT: "9464", METRICS_TOKEN: token }))
      expect(set.metricsPort).toEqual(Option.some(9464))
      expect(Option.map(set.metricsToken, Redacted.value)).toEqual(Option.some(token))
      expect(String(set.metricsToken)).not.toContain(token)
      expect(Either.getOrThrow(yield* load({ METRICS_PORT: "0" })).metricsPort).toEqual(Option.some(0))
      const empty = Either.getOrThrow(yield* load({ METRICS_PORT: "", METRICS_TOKEN: "" }))
      expect(empty.metricsPort).toEqual(Option.none())
      expect(empty.metricsToken).toEqual(Option.none())
    }))

  it.effect("reads every variable", () =>
    Effect.gen(function*() {
      const settings = Either.getOrThrow(
        yield* load({
          PORT: "9000",
          DATABASE_URL: "postgresql://u:p@db:5432/x",
          NATS_URL: "nats://bus:4222",
          HERALD_ROLE: "worker",
          HERALD_PARTITIONS: "64",
          HERALD_NODE_ID: "node-1",
          HERALD_NATS_PREFIX: "prod_eu",
          GATEWAY_RBM_URL: "http://sim:8090",
          WEBHOOK_ALLOW_PRIVATE: "true",
          LOG_LEVEL: "debug",
          LOG_FORMAT: "pretty"
        })
      )
      expect(settings).toMatchObject({ port: 9000, role: "worker", partitions: 64, nodeId: "node-1", natsPrefix: "prod_eu", webhookAllowPrivate: true, logFormat: "pretty" })
      expect(settings.gatewayRbmUrl).toEqual(Option.some("http://sim:8090"))
      expect(settings.logLevel).toEqual(LogLevel.Debug)
      // The database URL carries a password: it never prints.
      expect(String(settings.databaseUrl)).not.toContain("p@db")
    }))

  it.effect("takes NATS_URL as a comma-separated list, credentials out of the URLs (never kept in a server's address)", () =>
    Effect.gen(function*() {
      const settings = Either.getOrThrow(yield* load({
        NATS_URL: " nats://herald:s3cret@n1:4222, nats://n2:4222 ,tls://n3:4443",
        HERALD_NATS_REPLICAS: "3",
        HERALD_DB_POOL: "8",
        HERALD_DB_PREPARED_STATEMENTS: "false",
        HERALD_DB_LISTEN_URL: "postgres://postgres@db:5432/herald"
      }))
      expect(settings.natsServers).toEqual(["nats://n1:4222", "nats://n2:4222", "tls://n3:4443"])
      expect(settings.natsReplicas).toBe(3)
      expect(settings.natsAuth._tag).toBe("userPassword")
      if (settings.natsAuth._tag === "userPassword") {
        expect(settings.natsAuth.user).toBe("herald")
        expect(Redacted.value(settings.natsAuth.password)).toBe("s3cret")
        expect(String(settings.natsAuth.password)).not.toContain("s3cret")
      }
      expect(settings).toMatchObject({ dbPool: 8, dbPreparedStatements: false })
      expect(Option.map(settings.dbListenUrl, Redacted.value)).toEqual(Option.some("postgres://postgres@db:5432/herald"))
    }))

  it.effect("NATS credentials from the environment win over none in the URL; a token alone in the URL is a token", () =>
    Effect.gen(function*() {
      const fromEnv = Either.getOrThrow(yield* load({ NATS_URL: "nats://n1:4222", NATS_USER: "u", NATS_PASSWORD: "p", NATS_TLS_CA: "/etc/ca.pem" }))
      expect(fromEnv.natsAuth._tag).toBe("userPassword")
      expect(Option.map(fromEnv.natsTls, (t) => Option.getOrNull(t.caFile))).toEqual(Option.some("/etc/ca.pem"))
      const token = Either.getOrThrow(yield* load({ NATS_URL: "nats://abc123@n1:4222" }))
      expect(token.natsAuth._tag).toBe("token")
      expect(token.natsServers).toEqual(["nats://n1:4222"])
    }))

  it.effect("tracing is off unless an OTLP endpoint is set; OpenTelemetry's own variables configure it", () =>
    Effect.gen(function*() {
      const off = Either.getOrThrow(yield* load({}))
      expect(Option.isNone(off.tracing.url)).toBe(true)
      const on = Either.getOrThrow(yield* load({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
        OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=abc%3D%3D,tenant=ops",
        OTEL_SERVICE_NAME: "herald-eu",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.05"
      }))
      expect(on.tracing).toMatchObject({
        url: Option.some("http://collector:4318/v1/traces"),
        protocol: "http/protobuf",
        headers: { "x-api-key": "abc==", tenant: "ops" },
        serviceName: "herald-eu",
        resourceAttributes: { "deployment.environment": "prod" },
        sampleRatio: 0.05
      })
      // The signal's own endpoint is taken as it is; OTEL_SDK_DISABLED turns everything off.
      const own = Either.getOrThrow(yield* load({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://c/x", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }))
      expect(own.tracing).toMatchObject({ url: Option.some("https://c/x"), protocol: "http/json" })
      const disabled = Either.getOrThrow(yield* load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }))
      expect(Option.isNone(disabled.tracing.url)).toBe(true)
    }))

  it.effect("HERALD_SECRETS_KEY_PREVIOUS is unset by default and when empty; set, it is kept redacted", () =>
    Effect.gen(function*() {
      expect(Option.isNone(Either.getOrThrow(yield* load({})).secretsKeyPrevious)).toBe(true)
      expect(Option.isNone(Either.getOrThrow(yield* load({ HERALD_SECRETS_KEY_PREVIOUS: "" })).secretsKeyPrevious)).toBe(true)
      const set = Either.getOrThrow(yield* load({ HERALD_SECRETS_KEY_PREVIOUS: "old-secrets-key-0123456789abcdef0123" })).secretsKeyPrevious
      expect(Option.map(set, Redacted.value)).toEqual(Option.some("old-secrets-key-0123456789abcdef0123"))
      expect(String(Option.getOrThrow(set))).not.toContain("old-secrets-key")
    }))

  const bad: ReadonlyArray<[Record<string, string>, string]> = [
    [{ PORT: "eighty" }, "PORT"],
    [{ PORT: "70000" }, "PORT: must be an integer from 0 to 65535"],
    [{ HERALD_ROLE: "boss" }, "HERALD_ROLE"],
    [{ HERALD_PARTITIONS: "0" }, "HERALD_PARTITIONS: must be an integer from 1 to 4096"],
    [{ DATABASE_URL: "mysql://x/y" }, "DATABASE_URL: must be a URL with scheme postgres or postgresql"],
    [{ NATS_URL: "not a url" }, "NATS_URL"],
    [{ NATS_URL: "nats://n1:4222,http://n2:4222" }, "NATS_URL: must be a URL with scheme nats, tls, ws, wss, or a comma-separated list"],
    [{ HERALD_NATS_REPLICAS: "0" }, "HERALD_NATS_REPLICAS: must be an integer from 1 to 5"],
    [{ HERALD_NATS_REPLICAS: "7" }, "HERALD_NATS_REPLICAS: must be an integer from 1 to 5"],
    [{ NATS_USER: "herald" }, "NATS_PASSWORD: NATS_USER and NATS_PASSWORD go together"],
    [{ NATS_TOKEN: "t", NATS_CREDS: "/x.creds" }, "NATS_USER: set one of"],
    [{ NATS_TLS_CERT: "/c.pem" }, "NATS_TLS_KEY: NATS_TLS_CERT and NATS_TLS_KEY go together"],
    [{ HERALD_DB_POOL: "1" }, "HERALD_DB_POOL: must be an integer from 2 to 1000"],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT: must be an http or https URL"],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "OTEL_EXPORTER_OTLP_PROTOCOL"],
    [{ OTEL_TRACES_SAMPLER_ARG: "2" }, "OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1"],
    [{ OTEL_EXPORTER_OTLP_HEADERS: "novalue" }, "OTEL_EXPORTER_OTLP_HEADERS: must be key=value pairs"],
    [{ HERALD_DB_LISTEN_URL: "redis://x" }, "HERALD_DB_LISTEN_URL"],
    [{ HERALD_NATS_PREFIX: "a.b" }, "HERALD_NATS_PREFIX: must be 1-32 characters"],
    [{ HERALD_NODE_ID: "has space" }, "HERALD_NODE_ID"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL: must be one of"],
    [{ LOG_FORMAT: "xml" }, "LOG_FORMAT"],
    [{ WEBHOOK_ALLOW_PRIVATE: "maybe" }, "WEBHOOK_ALLOW_PRIVATE"],
    [{ GATEWAY_RBM_URL: "ftp://x" }, "GATEWAY_RBM_URL"],
    [{ HERALD_SECRETS_KEY_PREVIOUS: "too-short" }, "HERALD_SECRETS_KEY_PREVIOUS: must be at least 32 characters"],
    [{ METRICS_PORT: "nine" }, "METRICS_PORT: must be an integer from 0 to 65535"],
    [{ METRICS_PORT: "70000" }, "METRICS_PORT: must be an integer from 0 to 65535"],
    [{ METRICS_TOKEN: "short" }, "METRICS_TOKEN: must be at least 32 characters"]
  ]
  for (const [env, expected] of bad) {
    it.effect(`rejects ${JSON.stringify(env)} naming the variable`, () =>
      Effect.gen(function*() {
        const result = yield* load(env)
        expect(Either.isLeft(result)).toBe(true)
        const line = describeConfigError(Either.getLeft(result).pipe(Option.getOrThrow))
        expect(line).toContain(expected)
        expect(line).not.toContain("\n")
      }))
  }

  it.effect("with NODE_ENV=production, refuses the development defaults, the public URL among them (it decides whether the console's cookies are Secure)", () =>
    Effect.gen(function*() {
      const secrets = {
        NODE_ENV: "production",
        GATEWAY_WA_APP_SECRET: "a real app secret",
        GATEWAY_WA_VERIFY_TOKEN: "a real verify token",
        HERALD_SECRETS_KEY: "a real secrets key of at least 32 characters",
        SMTP_FEEDBACK_SECRET: "a real feedback secret"
      }
      const missing = yield* load(secrets)
      expect(Either.isLeft(missing) && describeConfigError(missing.left)).toContain("HERALD_PUBLIC_URL: must be set to a real value when NODE_ENV=production")
      const settings = Either.getOrThrow(yield* load({ ...secrets, HERALD_PUBLIC_URL: "https://console.example.com/" }))
      expect(settings.publicUrl).toEqual(Option.some("https://console.example.com"))
      // In development the default stands.
      expect(Either.isRight(yield* load({}))).toBe(true)
    }))

  it.effect("reports every wrong variable at once", () =>
    Effect.gen(function*() {
      const result = yield* load({ PORT: "x", HERALD_ROLE: "y" })
      const line = describeConfigError(Either.getLeft(result).pipe(Option.getOrThrow))
      expect(line).toContain("PORT")
      expect(line).toContain("HERALD_ROLE")
    }))
})
