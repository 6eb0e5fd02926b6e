import { HttpLayerRouter, HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import { AppConfig } from "../../config/AppConfig.ts"
import { CustomerImport } from "../../customers/CustomerImport.ts"
import { ApiRateLimits } from "../../ratelimit/ApiRateLimits.ts"
import { SecretKeys } from "../../security/SecretKeys.ts"
import { Idempotency } from "../idempotency/Idempotency.ts"
import { secretKeyScope } from "../idempotency/idempotentRoutes.ts"
import { answerImport, bodyOf, keyedImport } from "../rcs/ContactImportRoute.ts"
// Registers the envelopes of the app's errors (feature_locked) for `errorEnvelope`.
import { secretKeyOfHeader } from "./AppAuthentication.ts"
import { presentCustomerImportReport } from "../importReport.ts"

export const CUSTOMER_IMPORT_PATH = "/api/v1/app/contacts/import"


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
    const idempotency = yield* Idempotency
    const { importIdleMs } = yield* AppConfig
    yield* router.add(
      "POST",
      CUSTOMER_IMPORT_PATH,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const source = NodeHttpServerRequest.toIncomingMessage(request)
        return yield* answerImport(source, Effect.gen(function*() {
          const account = yield* Effect.tap(secretKeyOfHeader(keys, request.headers.authorization), limits.plan)
          return yield* keyedImport(idempotency, request, secretKeyScope(account), bodyOf(source, importIdleMs), (body) =>
            Effect.map(customers.importCustomers(account, { contentType: request.headers["content-type"], body }), presentCustomerImportReport))
        }))
      })
    )
  })
)
