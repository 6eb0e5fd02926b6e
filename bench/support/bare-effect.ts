// The framework's own ceiling: a bare @effect/platform route, no auth, no middleware, no tracing, answering
// the JSON it is given. Run: node --import tsx bench/support/bare-effect.ts PORT FILE
import { HttpLayerRouter, HttpMiddleware, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"

const [port, file] = process.argv.slice(2)
const body = JSON.parse(readFileSync(file!, "utf8"))
const Route = HttpLayerRouter.add("GET", "/api/v1/rcs/bots", HttpServerResponse.unsafeJson(body))
// Per-request tracing off, as in Herald when no tracer is configured.
HttpLayerRouter.serve(Route, { disableLogger: true, disableListenLog: true }).pipe(
  HttpMiddleware.withTracerDisabledWhen(() => true),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(port) })),
  Layer.launch,
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
