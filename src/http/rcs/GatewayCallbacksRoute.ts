import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { AppConfig } from "../../config/AppConfig.ts"
import { readRbmCallback, SIGNATURE_HEADER } from "../../gateway/rbm/callbacks.ts"
import { AutoReplies } from "../../autoReplies/AutoReplies.ts"
import { GatewayReports } from "../../messaging/GatewayReports.ts"
import { envelope } from "../errors.ts"

export const RBM_CALLBACK_PATH = "/api/v1/rcs/gateway/rbm/events"

/**
 * POST /api/v1/rcs/gateway/rbm/events (DESIGN.md, Simulator processes): RBM's callbacks, checked
 * against X-Goog-Signature before anything is read. A report about a message not recorded yet is
 * answered 404 so the gateway calls again (RBM retries failed callbacks; a callback may overtake
 * the commit of its send). Served off the router: the signature covers the raw body.
 */
export const GatewayCallbacksRoute = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const reports = yield* GatewayReports
    const autoReplies = yield* AutoReplies
    const token = Redacted.value(config.gatewayRbmClientToken)
    yield* router.add(
      "POST",
      RBM_CALLBACK_PATH,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const body = new Uint8Array(yield* request.arrayBuffer)
        const callback = readRbmCallback(body, request.headers[SIGNATURE_HEADER], token)
        switch (callback._tag) {
          case "Handshake":
            return HttpServerResponse.text(callback.secret)
          case "BadSignature":
            yield* Effect.logWarning("RBM callback refused", { reason: callback.reason })
            return envelope(401, "invalid_signature", "callback signature does not verify")
          case "Malformed":
            return envelope(400, "invalid_request", `malformed callback: ${callback.reason}`, { errors: [] })
        }
        const report = callback.report
        switch (report._tag) {
          case "Status": {
            const result = yield* reports.applyStatus(report)
            return result === "unknown_message"
              ? envelope(404, "not_found", `no message ${report.messageId} (yet)`)
              : HttpServerResponse.unsafeJson({ success: true, result })
          }
          case "Inbound": {
            // Stored with its message.received event in one transaction; undefined when the
            // gateway repeats a message already stored (or names no bot of ours): nothing more.
            const bot = yield* reports.recordInbound(report)
            if (bot !== undefined) yield* autoReplies.onInbound(bot, report)
            return HttpServerResponse.unsafeJson({ success: true })
          }
          case "Ignored":
            return HttpServerResponse.unsafeJson({ success: true, ignored: report.reason })
        }
      })
    )
  })
)
