import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { FetchHttpClient, HttpTraceContext } from "@effect/platform"
import { type Context, Effect, FiberRef, Layer, Option, Tracer } from "effect"
import { randomBytes } from "node:crypto"
import type { TracingSettings } from "./tracingSettings.ts"

const hex = (bytes: number) => randomBytes(bytes).toString("hex")

/** A span that is dropped (not sampled): carried so its children know, exported never. */
const unsampledSpan = (name: string, parent: Option.Option<Tracer.AnySpan>, context: Context.Context<never>, kind: Tracer.SpanKind, startTime: bigint): Tracer.Span => ({
  _tag: "Span",
  name,
  spanId: hex(8),
  traceId: Option.match(parent, { onNone: () => hex(16), onSome: (p) => p.traceId }),
  parent,
  context,
  status: { _tag: "Started", startTime },
  attributes: new Map(),
  links: [],
  sampled: false,
  kind,
  end: () => {},
  attribute: () => {},
  event: () => {},
  addLinks: () => {}
})

/** Keeps `ratio` of new traces; a span with a parent is kept exactly when its parent was. */
export const sampling = (tracer: Tracer.Tracer, ratio: number): Tracer.Tracer =>
  ratio >= 1
    ? tracer
    : Tracer.make({
      span(name, parent, context, links, startTime, kind, options) {
        const keep = Option.match(parent, { onNone: () => Math.random() < ratio, onSome: (p) => p.sampled })
        return keep ? tracer.span(name, parent, context, links, startTime, kind, options) : unsampledSpan(name, parent, context, kind, startTime)
      },
      context: tracer.context
    })

/**
 * The node's tracer: OTLP/HTTP to the collector with the node's identity as resource attributes
 * (service.instance.id = HERALD_NODE_ID, herald.role), or disabled.
 */
export const tracingLayer = (settings: TracingSettings, node: { readonly nodeId: string; readonly role: string; readonly version: string }): Layer.Layer<never> =>
  Option.match(settings.url, {
    onNone: () => Layer.setTracerEnabled(false),
    onSome: (url) =>
      Layer.unwrapScoped(
        Effect.map(
          OtlpTracer.make({
            url,
            headers: settings.headers,
            resource: {
              serviceName: settings.serviceName,
              serviceVersion: node.version,
              attributes: { "service.instance.id": node.nodeId, "herald.role": node.role, ...settings.resourceAttributes }
            },
            exportInterval: "1 second"
          }),
          (tracer) => Layer.setTracer(sampling(tracer, settings.sampleRatio))
        )
      ).pipe(
        Layer.provide(FetchHttpClient.layer),
        Layer.provide(settings.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf)
      )
  })

/** Header carrying the trace context in NATS messages and outbox rows (W3C Trace Context). */
export const TRACEPARENT = "traceparent"

/**
 * The current span's W3C `traceparent`, to carry in a message, when tracing is on and a span is
 * current; undefined otherwise (nothing is carried when tracing is off).
 */
export const currentTraceparent: Effect.Effect<string | undefined> = Effect.flatMap(FiberRef.get(FiberRef.currentTracerEnabled), (enabled) =>
  enabled
    ? Effect.map(Effect.option(Effect.currentSpan), (span) =>
      Option.isSome(span) ? `00-${span.value.traceId}-${span.value.spanId}-${span.value.sampled ? "01" : "00"}` : undefined)
    : Effect.succeed(undefined))

/** The current span when tracing is on (work started later, elsewhere, is parented to it); undefined otherwise. */
export const tracedSpan: Effect.Effect<Tracer.AnySpan | undefined> = Effect.flatMap(FiberRef.get(FiberRef.currentTracerEnabled), (enabled) =>
  enabled ? Effect.map(Effect.option(Effect.currentSpan), Option.getOrUndefined) : Effect.succeed(undefined))

/** The span a message's `traceparent` names, as the parent of the work it starts. */
export const parentFrom = (traceparent: string | undefined): Option.Option<Tracer.ExternalSpan> =>
  traceparent === undefined ? Option.none() : HttpTraceContext.w3c({ traceparent } as never)
