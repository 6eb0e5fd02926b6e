import { HttpLayerRouter, HttpServerResponse } from "@effect/platform"
import { Effect, Metric, MetricBoundaries } from "effect"
import { renderPrometheus } from "../observability/Prometheus.ts"

const requests = Metric.counter("http_requests_total", {
  description: "HTTP requests answered, by method, route pattern and status",
  incremental: true
})

const duration = Metric.histogram(
  "http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "HTTP request latency, by method and route pattern"
)

// Tagging a metric allocates and hashes a key; a node sees few distinct (method, route, status)
// triples, so each tagged metric is built once and reused on the hot path.
const counters = new Map<string, Metric.Metric.Counter<number>>()
const histograms = new Map<string, Metric.Metric.Histogram<number>>()

export const recordRequest = (method: string, route: string, status: number, seconds: number) =>
  Effect.suspend(() => {
    const ck = `${method} ${route} ${status}`
    let counter = counters.get(ck)
    if (counter === undefined) {
      counter = requests.pipe(Metric.tagged("method", method), Metric.tagged("route", route), Metric.tagged("status", String(status)))
      counters.set(ck, counter)
    }
    const hk = `${method} ${route}`
    let histogram = histograms.get(hk)
    if (histogram === undefined) {
      histogram = duration.pipe(Metric.tagged("method", method), Metric.tagged("route", route))
      histograms.set(hk, histogram)
    }
    return Effect.zipRight(Metric.increment(counter), Metric.update(histogram, seconds))
  })

/** GET /metrics in the Prometheus text format. */
export const MetricsRoute = HttpLayerRouter.add(
  "GET",
  "/metrics",
  Effect.map(renderPrometheus, (body) =>
    HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8" }))
)
