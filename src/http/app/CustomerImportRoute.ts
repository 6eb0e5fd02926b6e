import { HttpLayerRouter, HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import { AppConfig } from "../../config/AppConfig.ts"
import { CustomerImport } from "../../customers/CustomerImport.ts"
import { ApiRateLimits } from "../../ratelimit/ApiRateLimits.ts"
import { SecretKeys } from "../../security/SecretKeys.ts"
import { answerImport, bodyOf } from "../rcs/ContactImportRoute.ts"
// Registers the envelopes of the app's errors (feature_locked) for `errorEnvelope`.
import "./AppAuthentication.ts"

export const CUSTOMER_IMPORT_PATH = "/api/v1/app/contacts/import"

const BEARER = /^bearer\s+(\S+)\s*$/i

/**
 * POST /api/v1/app/contacts/import, served off HttpApi like the contact lists' import (a streamed
 * body past the 10 MB limit; declared in CustomerImportApi for the OpenAPI document). The key and
 * the plan bucket are checked before a byte of the body is read.
 */
export const CustomerImportRoute = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* SecretKeys
    const limits = yield* ApiRateLimits
    const customers = yield* CustomerImport
    const { importIdleMs } = yield* AppConfig
    yield* router.add(
      "POST",
      CUSTOMER_IMPORT_PATH,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const source = NodeHttpServerRequest.toIncomingMessage(request)
        const token = BEARER.exec(request.headers.authorization ?? "")?.[1] ?? ""
        return yield* answerImport(source, Effect.gen(function*() {
          const account = yield* Effect.tap(keys.authenticate(token), limits.plan)
          return yield* customers.importCustomers(account, { contentType: request.headers["content-type"], body: bodyOf(source, importIdleMs) })
        }))
      })
    )
  })
)
