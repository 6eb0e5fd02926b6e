import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Metric, MetricBoundaries, MetricKey, Option, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { labelled } from "../observability/labelled.ts"
import { renderPrometheus } from "../observability/Prometheus.ts"
import { safeEqual } from "../crypto/secrets.ts"
import { readBearer } from "./bearer.ts"

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

const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"

/**
 * GET /metrics in the Prometheus text format. With a token, only for `Authorization: Bearer
 * <token>` (Prometheus's `authorization` scrape setting): anyone else gets 401 and nothing of the
 * registry.
 */
export const metricsRoute = (token: Option.Option<Redacted.Redacted<string>>) =>
  HttpLayerRouter.add(
    "GET",
    "/metrics",
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      if (Option.isSome(token)) {
        const read = readBearer(request.headers["authorization"])
        if ("problem" in read || !safeEqual(read.credential, Redacted.value(token.value))) {
          return Effect.succeed(
            HttpServerResponse.unsafeJson(
              { success: false, code: "unauthorized", message: "metrics need Authorization: Bearer <METRICS_TOKEN>" },
              { status: 401, headers: { "www-authenticate": "Bearer realm=\"metrics\"" } }
            )
          )
        }
      }
      return Effect.map(renderPrometheus, (body) => HttpServerResponse.text(body, { contentType: PROMETHEUS_TEXT }))
    })
  )

/**
 * /metrics on PORT (the API's port, which clients reach): only when METRICS_TOKEN is set and
 * METRICS_PORT is not, and then only with the token. Otherwise the route does not exist (404).
 */
export const ApiPortMetricsRoute = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  Option.isNone(config.metricsPort) && Option.isSome(config.metricsToken) ? metricsRoute(config.metricsToken) : Layer.empty))
