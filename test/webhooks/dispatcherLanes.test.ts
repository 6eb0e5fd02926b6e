import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import http from "node:http"
import { AppConfig, type AppSettings } from "../../src/config/AppConfig.ts"
import { type AttemptJob, Dispatcher } from "../../src/webhooks/Dispatcher.ts"

// An endpoint's lane (src/webhooks/Dispatcher.ts): at most HERALD_WEBHOOK_ENDPOINT_CONCURRENCY
// requests in flight and HERALD_WEBHOOK_LANE_BACKLOG waiting behind them; beyond that `hasRoom`
// says no, and the delivery actor puts the attempt off with a timer (test/webhooks/deliveryRules.test.ts)
// instead of queueing it in memory. Another endpoint's lane is not affected.

const settings = {
  webhookEndpointConcurrency: 1,
  webhookLaneBacklog: 2,
  webhookConcurrency: 16,
  webhookTimeoutMs: 5_000,
  webhookAllowPrivate: true
} as AppSettings

describe("webhook endpoint lanes", () => {
  it.scoped("one in flight and two waiting fill a lane; it has room again as answers come, and other lanes are not affected", () =>
    Effect.gen(function*() {
      // Answers only when told: the lane's requests stay in flight as long as the test wants.
      const pending: Array<http.ServerResponse> = []
      const server = http.createServer((req, res) => {
        req.resume()
        pending.push(res)
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))),
        () => Effect.sync(() => (server.closeAllConnections(), server.close()))
      )
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`
      const built = yield* Layer.build(Dispatcher.Default.pipe(Layer.provide(AppConfig.make(settings))))
      const dispatcher = Context.get(built, Dispatcher)
      const outcomes: Array<number> = []
      const job = (n: number, webhookId = "wh_slow"): AttemptJob => ({ deliveryId: `d${n}`, webhookId, url, secret: "whsec_dGVzdA==", body: "{}", attempt: 1 })

      expect(dispatcher.hasRoom("wh_slow")).toBe(true)
      for (let n = 1; n <= 3; n++) yield* dispatcher.submit(job(n), (o) => void outcomes.push(o.statusCode))
      expect(dispatcher.hasRoom("wh_slow")).toBe(false)
      expect(dispatcher.hasRoom("wh_other")).toBe(true)

      // One request reaches the endpoint at a time.
      const answerNext = Effect.gen(function*() {
        while (pending.length === 0) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
        expect(pending).toHaveLength(1)
        pending.shift()!.writeHead(200).end("ok")
      })
      yield* answerNext
      while (outcomes.length < 1) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
      expect(dispatcher.hasRoom("wh_slow")).toBe(true)
      yield* answerNext
      yield* answerNext
      while (outcomes.length < 3) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
      expect(outcomes).toEqual([200, 200, 200])
    }))
})
