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
import { PublicApi } from "./public/PublicApi.ts"
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
    .add(AutoRepliesApi)
    .add(ContactListsApi)
    .add(BroadcastsApi)
    .add(DeveloperApi)
    .add(AccountApi)
    .add(BillingApi)
    .add(ContactsApi)
    .add(SegmentsApi)
    .add(AiAgentsApi)
    .add(AppMessagesApi)
    .add(CapiConfigApi)
    .add(ConversionsApi)
    .add(PublicApi)
    .add(PartnerEmailApi)
    .add(PartnerEmailVerifyApi)
))

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
    .annotate(OpenApi.Description, "Herald messaging engine: RCS business messaging, WhatsApp (public messaging API), webhooks, broadcasts, partner e-mail.")
)

/**
 * What a worker node serves: health only (plus /metrics), for orchestrators' probes. Same API id,
 * so the health handlers built for HeraldApi serve it too.
 */
export const OpsApi = withEnvelopeErrors(HttpApi.make("herald").add(HealthApi))
