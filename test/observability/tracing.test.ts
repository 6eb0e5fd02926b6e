import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Tracer } from "effect"
import { currentTraceparent, parentFrom, sampling } from "../../src/observability/Tracing.ts"

// The sampler of OTEL_TRACES_SAMPLER (parent-based ratio): a new trace is kept with the ratio's
// chance, a span with a parent exactly when its parent was, and a dropped span still carries its
// trace (with the "not sampled" flag) so the work it starts is dropped too.

/** A tracer that records the names of the spans it was asked for. */
const recording = () => {
  const made: Array<string> = []
  const inner = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      made.push(name)
      return {
        _tag: "Span", name, spanId: "1111111111111111", traceId: Option.match(parent, { onNone: () => "a".repeat(32), onSome: (p) => p.traceId }), parent, context,
        status: { _tag: "Started", startTime }, attributes: new Map(), links, sampled: true, kind,
        end: () => {}, attribute: () => {}, event: () => {}, addLinks: () => {}
      }
    },
    context: (f) => f()
  })
  return { made, inner }
}

describe("trace sampling and propagation", () => {
  it.effect("ratio 0 drops new traces, yet their context still travels, marked not sampled", () =>
    Effect.gen(function*() {
      const { inner, made } = recording()
      const traceparent = yield* currentTraceparent.pipe(Effect.withSpan("root"), Effect.withSpan("outer"), Effect.provide(Layer.setTracer(sampling(inner, 0))))
      expect(made).toEqual([])
      expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/)
    }))

  it.effect("a span whose parent was sampled (a caller's traceparent) is kept whatever the ratio", () =>
    Effect.gen(function*() {
      const { inner, made } = recording()
      const parent = Option.getOrThrow(parentFrom("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
      const traceparent = yield* currentTraceparent.pipe(Effect.withSpan("child", { parent }), Effect.provide(Layer.setTracer(sampling(inner, 0))))
      expect(made).toEqual(["child"])
      expect(traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-/)
    }))

  it.effect("a parent that was not sampled drops its children, even at ratio 1 for new traces", () =>
    Effect.gen(function*() {
      const { inner, made } = recording()
      const parent = Option.getOrThrow(parentFrom("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"))
      yield* Effect.void.pipe(Effect.withSpan("child", { parent }), Effect.provide(Layer.setTracer(sampling(inner, 0.5))))
      expect(made).toEqual([])
    }))

  it.effect("with tracing off nothing is carried in messages", () =>
    Effect.gen(function*() {
      const traceparent = yield* currentTraceparent.pipe(Effect.withSpan("anything"), Effect.provide(Layer.setTracerEnabled(false)))
      expect(traceparent).toBeUndefined()
    }))
})
