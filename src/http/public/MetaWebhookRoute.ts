import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { timingSafeEqual } from "node:crypto"
import { AppConfig } from "../../config/AppConfig.ts"
import { changesOf, META_SIGNATURE_HEADER, signatureValid } from "../../whatsapp/inbound/metaWebhook.ts"
import { WaReports } from "../../whatsapp/inbound/WaReports.ts"
import { envelope } from "../errors.ts"

export const META_WEBHOOK_PATH = "/api/v1/public/gateway/whatsapp"

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * Herald's Meta webhook (docs/whatsapp.md, Inbound). GET answers Meta's subscription check
 * (hub.verify_token against GATEWAY_WA_VERIFY_TOKEN, hub.challenge echoed); POST takes messages,
 * statuses, calls, payments and template reviews, verified by X-Hub-Signature-256 before the body
 * is parsed. Served off the router: the signature covers the raw bytes. A body Herald has
 * applied is answered 200; a failure to apply it is a 5xx, which Meta retries (every change is
 * idempotent on Meta's ids).
 */
export const MetaWebhookRoute = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const reports = yield* WaReports
    const appSecret = Redacted.value(config.gatewayWaAppSecret)
    const verifyToken = Redacted.value(config.gatewayWaVerifyToken)
    yield* router.add(
      "GET",
      META_WEBHOOK_PATH,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const query = new URL(request.url, "http://herald").searchParams
        const challenge = query.get("hub.challenge")
        if (query.get("hub.mode") !== "subscribe" || challenge === null) {
          return envelope(400, "invalid_request", "expected Meta's verification request (hub.mode=subscribe, hub.verify_token, hub.challenge)", { errors: [] })
        }
        if (!sameText(query.get("hub.verify_token") ?? "", verifyToken)) return envelope(403, "forbidden", "hub.verify_token does not match")
        return HttpServerResponse.text(challenge)
      })
    )
    yield* router.add(
      "POST",
      META_WEBHOOK_PATH,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const body = new Uint8Array(yield* request.arrayBuffer)
        if (!signatureValid(body, request.headers[META_SIGNATURE_HEADER], appSecret)) {
          yield* Effect.logWarning("Meta webhook refused: bad signature")
          return envelope(401, "invalid_signature", "X-Hub-Signature-256 does not verify")
        }
        let parsed: unknown
        try {
          parsed = JSON.parse(Buffer.from(body).toString("utf8"))
        } catch {
          return envelope(400, "invalid_request", "the webhook body is not JSON", { errors: [] })
        }
        const changes = changesOf(parsed)
        if (changes === undefined) return envelope(400, "invalid_request", "not a WhatsApp Business Account webhook", { errors: [] })
        yield* reports.apply(changes)
        return HttpServerResponse.unsafeJson({ success: true })
      })
    )
  })
)
