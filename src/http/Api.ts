import { HttpApi, OpenApi } from "@effect/platform"
import { Option, Schema } from "effect"
import { DecodeErrorResponse, ServiceUnavailableResponse } from "./errors.ts"
import { HealthApi } from "./health/HealthApi.ts"
import { AccountSecurityApi, SignInApi } from "./rcs/SignInApi.ts"
import { ApiKeysApi } from "./rcs/ApiKeysApi.ts"
import { BotApplicationsApi } from "./rcs/BotApplicationsApi.ts"
import { BotsApi } from "./rcs/BotsApi.ts"
import { TeamApi } from "./rcs/TeamApi.ts"
import { TemplatesApi } from "./rcs/TemplatesApi.ts"
import { MessagesApi } from "./rcs/MessagesApi.ts"
import { WalletApi } from "./rcs/WalletApi.ts"
import { OverviewApi } from "./rcs/OverviewApi.ts"
import { AutoRepliesApi } from "./rcs/AutoRepliesApi.ts"
import { ContactImportApi, ContactListsApi } from "./rcs/ContactListsApi.ts"
import { BroadcastsApi } from "./rcs/BroadcastsApi.ts"
import { WebhooksApi } from "./rcs/WebhooksApi.ts"
import { DeveloperApi } from "./app/DeveloperApi.ts"
import { CapiConfigApi, ConversionsApi } from "./app/ConversionsApi.ts"
import { AccountApi, BillingApi } from "./app/AccountApi.ts"
import { AiAgentsApi } from "./app/AiAgentsApi.ts"
import { AppMessagesApi } from "./app/AppMessagesApi.ts"
import { ContactsApi, CustomerImportApi, SegmentsApi } from "./app/ContactsApi.ts"
import { OptKeywordsApi } from "./app/OptKeywordsApi.ts"
import { PublicApi } from "./public/PublicApi.ts"
import { AppCampaignsApi, PublicCampaignsApi } from "./public/CampaignsApi.ts"
import { PartnerEmailApi, PartnerEmailVerifyApi } from "./partner/PartnerEmailApi.ts"

// HttpApi answers a request that fails its schemas with its own `HttpApiDecodeError` body; the
// contract wants the common envelope (`invalid_request` with `errors[{path, message}]`). The
// API-level error schema is therefore replaced by one that encodes decode failures to it, plus the
// 503 every endpoint may answer when a dependency is down.
export const withEnvelopeErrors = <A extends HttpApi.HttpApi.Any>(api: A): A => {
  ;(api as unknown as { errorSchema: unknown }).errorSchema = Schema.Union(DecodeErrorResponse, ServiceUnavailableResponse)
  return api
}

/**
 * Every request body decodes strictly: each field the schema does not declare is a 400 naming it, as
 * the OpenAPI document (`additionalProperties: false`) says, rather than silently dropped. The
 * annotation on a payload's root applies to everything nested in it.
 */
export const withStrictPayloads = <A extends HttpApi.HttpApi.Any>(api: A): A => {
  for (const group of Object.values((api as unknown as HttpApi.HttpApi.AnyWithProps).groups)) {
    const endpoints = group.endpoints as Record<string, (typeof group.endpoints)[string]>
    for (const [name, endpoint] of Object.entries(endpoints)) {
      if (Option.isSome(endpoint.payloadSchema)) {
        endpoints[name] = endpoint.setPayload(endpoint.payloadSchema.value.annotations({ parseOptions: { onExcessProperty: "error", errors: "all" } })) as any
      }
    }
  }
  return api
}

/** What HttpApi serves on an api node: every group but those served off the router. */
export const ServedApi = withStrictPayloads(withEnvelopeErrors(
  HttpApi.make("herald")
    .add(HealthApi)
    .add(SignInApi)
    .add(AccountSecurityApi)
    .add(ApiKeysApi)
    .add(TeamApi)
    .add(WebhooksApi)
    .add(BotApplicationsApi)
    .add(TemplatesApi)
    .add(MessagesApi)
    .add(WalletApi)
    .add(OverviewApi)
    .add(AutoRepliesApi)
    .add(ContactListsApi)
    .add(BroadcastsApi)
    .add(DeveloperApi)
    .add(AccountApi)
    .add(BillingApi)
    .add(ContactsApi)
    .add(SegmentsApi)
    .add(OptKeywordsApi)
    .add(AiAgentsApi)
    .add(AppMessagesApi)
    .add(CapiConfigApi)
    .add(ConversionsApi)
    .add(PublicApi)
    .add(PublicCampaignsApi)
    .add(AppCampaignsApi)
    .add(PartnerEmailApi)
    .add(PartnerEmailVerifyApi)
))

/** The document's introduction (Markdown): what every operation has in common. */
const API_DESCRIPTION = `Herald messaging engine: RCS business messaging, WhatsApp (the public messaging API and the app API), \
webhooks, broadcasts, contacts and partner e-mail.

**Credentials.** /api/v1/rcs takes a user token (JWT) or an API key as Bearer; /api/v1/app a secret key as Bearer (the \
owner's developer settings and CAPI configuration a user token); /api/v1/public the secret key as Basic; \
/api/v1/partner/email a partner key as Bearer. The security schemes say more.

**Errors.** Every answer that is not a 2xx is JSON \`{success: false, code, message, …}\`: \`code\` is stable and meant \
for programs, \`message\` for people. Each operation lists the codes it may answer; a body, path parameter or query \
value that is not valid is 400 \`invalid_request\` with \`errors: [{path, message}]\` naming every problem at once, and a \
field a body does not declare is one of them. Every operation may also answer 503 \`service_unavailable\`; a wrong \
method on a known path is 405 \`method_not_allowed\` (with Allow), a body past 10 MB 413 \`payload_too_large\`, one \
that stops arriving 408 \`request_timeout\`, another type than JSON 415 \`unsupported_media_type\`. Every answer \
carries \`x-request-id\`.

**Query parameters** are strict: one an operation does not list is 400 \`invalid_request\` naming it and the ones it \
takes, as a body's undeclared field is.

**Lists** page by cursor: \`limit\`, then the answer's \`next_cursor\` passed back until it is empty or absent, as the \
query parameter each list names: \`cursor\` on /api/v1/rcs, /api/v1/app and /api/v1/public, \`next_cursor\` on \
/api/v1/partner/email (the contract's name there).

**Idempotency-Key.** Sends, broadcasts, imports and key creation take an \`Idempotency-Key\` header: a copy of the \
request within 24 hours gets the first answer (\`Idempotent-Replayed: true\`) instead of running again.

**Webhooks.** What Herald POSTs to your endpoints is under \`webhooks\`: an envelope \`{event_id, type, occurred_at, \
delivery_id, account_id, data}\` signed per Standard Webhooks.`

/**
 * The whole HTTP API of an api node, as documented (OpenAPI) and as the authorization matrix walks
 * it: ServedApi plus the groups served off the router (`readRoute`s, the streamed contact import).
 */
export const HeraldApi = withEnvelopeErrors(
  ServedApi
    .add(BotsApi)
    .add(ContactImportApi)
    .add(CustomerImportApi)
    .annotate(OpenApi.Title, "Herald")
    .annotate(OpenApi.Version, "1")
    .annotate(OpenApi.Description, API_DESCRIPTION)
    .annotate(OpenApi.License, { name: "Apache-2.0", identifier: "Apache-2.0" } as OpenApi.OpenAPISpecLicense)
    .annotate(OpenApi.Servers, [{ url: "/", description: "The Herald API node serving this document" }])
)

/**
 * What a worker node serves: health only (plus /metrics), for orchestrators' probes. Same API id,
 * so the health handlers built for HeraldApi serve it too.
 */
export const OpsApi = withEnvelopeErrors(HttpApi.make("herald").add(HealthApi))
