import { Config, ConfigError, Either, Option } from "effect"

/**
 * Traces for operators (docs/operations.md, Traces): OpenTelemetry spans exported over OTLP/HTTP
 * when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is set, and none otherwise:
 * the tracer is then disabled, so every span Effect would make (one per SQL statement, per request)
 * is a shared no-op and nothing is carried in messages. The settings are OpenTelemetry's own
 * environment variables, so an operator's collector configuration applies unchanged.
 */
export interface TracingSettings {
  /** Where spans go (…/v1/traces); none: tracing is off. */
  readonly url: Option.Option<string>
  readonly protocol: "http/protobuf" | "http/json"
  readonly headers: Readonly<Record<string, string>>
  readonly serviceName: string
  readonly resourceAttributes: Readonly<Record<string, string>>
  /** Share of new traces kept (1: all); a span with a parent follows its parent's decision. */
  readonly sampleRatio: number
}

export const tracingOff: TracingSettings = {
  url: Option.none(),
  protocol: "http/protobuf",
  headers: {},
  serviceName: "herald",
  resourceAttributes: {},
  sampleRatio: 1
}

/** `k1=v1,k2=v2` with percent-encoded values (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES). */
const keyValues = (name: string) =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.mapOrFail((raw) => {
      const out: Record<string, string> = {}
      for (const part of raw.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
        const at = part.indexOf("=")
        if (at <= 0) return Either.left(ConfigError.InvalidData([name], "must be key=value pairs separated by commas"))
        try {
          out[part.slice(0, at).trim()] = decodeURIComponent(part.slice(at + 1).trim())
        } catch {
          return Either.left(ConfigError.InvalidData([name], "a value is not valid percent-encoding"))
        }
      }
      return Either.right(out)
    })
  )

const otlpUrl = (name: string) =>
  Config.string(name).pipe(
    Config.validate({
      message: "must be an http or https URL",
      validation: (value) => {
        try {
          return ["http:", "https:"].includes(new URL(value).protocol)
        } catch {
          return false
        }
      }
    }),
    Config.option
  )

const protocol = (name: string) => Config.option(Config.literal("http/protobuf", "http/json")(name))

/**
 * The sampler of OpenTelemetry's variables: always_on (the default), always_off, traceidratio
 * and their parentbased_ forms (a span with a parent always follows it here, as Herald's spans
 * all continue a trace they were given).
 */
const sampleRatio = Config.all({
  sampler: Config.literal("always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio")(
    "OTEL_TRACES_SAMPLER"
  ).pipe(Config.withDefault("parentbased_always_on" as const)),
  arg: Config.number("OTEL_TRACES_SAMPLER_ARG").pipe(
    Config.validate({ message: "must be a number from 0 to 1", validation: (n) => n >= 0 && n <= 1 }),
    Config.withDefault(1)
  )
}).pipe(Config.map(({ arg, sampler }) => (sampler.endsWith("always_on") ? 1 : sampler.endsWith("always_off") ? 0 : arg)))

export const tracingConfig: Config.Config<TracingSettings> = Config.all({
  disabled: Config.boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  tracesEndpoint: otlpUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
  endpoint: otlpUrl("OTEL_EXPORTER_OTLP_ENDPOINT"),
  tracesProtocol: protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
  protocol: protocol("OTEL_EXPORTER_OTLP_PROTOCOL"),
  headers: keyValues("OTEL_EXPORTER_OTLP_HEADERS"),
  tracesHeaders: keyValues("OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("herald")),
  resourceAttributes: keyValues("OTEL_RESOURCE_ATTRIBUTES"),
  sampleRatio
}).pipe(
  Config.map((c): TracingSettings => ({
    // The signal's own endpoint is used as given; the general one gets the signal's path (the spec's rule).
    url: c.disabled
      ? Option.none()
      : Option.orElse(c.tracesEndpoint, () => Option.map(c.endpoint, (base) => `${base.replace(/\/+$/, "")}/v1/traces`)),
    protocol: Option.getOrElse(Option.orElse(c.tracesProtocol, () => c.protocol), () => "http/protobuf" as const),
    headers: { ...c.headers, ...c.tracesHeaders },
    serviceName: c.serviceName,
    resourceAttributes: c.resourceAttributes,
    sampleRatio: c.sampleRatio
  }))
)
