import { HttpLayerRouter, HttpServerResponse } from "@effect/platform"
import { Effect, Metric, MetricBoundaries, MetricKey } from "effect"
import { labelled } from "../observability/labelled.ts"
import { renderPrometheus } from "../observability/Prometheus.ts"

const requests = MetricKey.counter("http_requests_total", {
  description: "HTTP requests answered, by method, route pattern and status",
  incremental: true
})

const duration = MetricKey.histogram(
  "http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "HTTP request latency, by method and route pattern"
)

// A node sees few distinct (method, route, status) triples: each labelled metric is built once.
const counters = new Map<string, Metric.Metric.Counter<number>>()
const histograms = new Map<string, Metric.Metric.Histogram<number>>()

/** Synchronous on purpose: it runs once per request, outside any Effect step. */
export const recordRequest = (method: string, route: string, status: number, seconds: number): void => {
  const ck = `${method} ${route} ${status}`
  let counter = counters.get(ck)
  if (counter === undefined) {
    counter = labelled(requests, { method, route, status: String(status) })
    counters.set(ck, counter)
  }
  const hk = `${method} ${route}`
  let histogram = histograms.get(hk)
  if (histogram === undefined) {
    histogram = labelled(duration, { method, route })
    histograms.set(hk, histogram)
  }
  counter.unsafeUpdate(1, [])
  histogram.unsafeUpdate(seconds, [])
}

/** GET /metrics in the Prometheus text format. */
export const MetricsRoute = HttpLayerRouter.add(
  "GET",
  "/metrics",
  Effect.map(renderPrometheus, (body) =>
    HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8" }))
)
