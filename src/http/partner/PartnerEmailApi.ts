import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { InvalidCursor, pageFields, PageQuery } from "../../email/cursorPage.ts"
import { EVENT_TYPES, QuotaExceeded } from "../../email/model.ts"
import { InvalidApiKeyResponse } from "../Authentication.ts"
import { ConflictResponse, errorResponse, InvalidRequestResponse, NotFoundResponse, ServiceUnavailableResponse } from "../errors.ts"

export const InvalidCursorResponse = errorResponse(InvalidCursor, 400, "invalid_cursor")
export const QuotaExceededResponse = errorResponse(QuotaExceeded, 429, "quota_exceeded")

/** The partner a `pk_partner_…` key belongs to. */
export class CurrentPartner extends Context.Tag("herald/CurrentPartner")<CurrentPartner, {
  readonly partnerId: string
  readonly name: string
}>() {}

/** `Authorization: Bearer pk_partner_…`; any other credential of Herald's (a user token, an API or secret key) is 401. */
export class PartnerAuthentication extends HttpApiMiddleware.Tag<PartnerAuthentication>()("PartnerAuthentication", {
  failure: InvalidApiKeyResponse,
  provides: CurrentPartner,
  security: { partnerKey: HttpApiSecurity.bearer }
}) {}

const Address = Schema.String.pipe(Schema.maxLength(320))
const Addresses = Schema.Array(Address).pipe(Schema.maxItems(50))
const EventType = Schema.Literal(...EVENT_TYPES)

const Identity = {
  id: Schema.String,
  identity: Schema.String,
  type: Schema.Literal("EMAIL_ADDRESS", "DOMAIN"),
  status: Schema.Literal("PENDING", "VERIFIED", "FAILED"),
  dkim_tokens: Schema.optional(Schema.Array(Schema.String)).annotations({
    description: "a domain's three tokens: publish `<token>._domainkey.<domain>` as a CNAME to `<token>.dkim.herald`"
  }),
  created_at: Schema.String
}

const Destination = Schema.Struct({
  destination_id: Schema.String,
  url: Schema.String,
  events: Schema.Array(EventType),
  secret: Schema.optional(Schema.String).annotations({ description: "the signing secret (whsec_…), answered only when the destination is created" })
})

const ConfigurationSet = {
  name: Schema.String,
  event_destinations: Schema.Array(Destination),
  created_at: Schema.String
}

const DestinationInput = Schema.Struct({
  destination_id: Schema.optional(Schema.String).annotations({ description: "an existing destination to keep (its URL and events may change); absent: a new one" }),
  url: Schema.String.pipe(Schema.maxLength(2048)),
  events: Schema.Array(EventType).pipe(Schema.minItems(1))
})

const SetName = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/)).annotations({
  description: "1 to 64 letters, digits, _ and -"
})

const Template = {
  name: Schema.String,
  subject: Schema.String,
  html: Schema.optional(Schema.String),
  text: Schema.optional(Schema.String),
  created_at: Schema.String
}

const TemplateBody = {
  subject: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(998)),
  html: Schema.optional(Schema.String.pipe(Schema.maxLength(512_000))),
  text: Schema.optional(Schema.String.pipe(Schema.maxLength(512_000)))
}

const Suppressed = {
  email: Schema.String,
  reason: Schema.Literal("BOUNCE", "COMPLAINT", "MANUAL"),
  created_at: Schema.String
}

const AccessRequest = {
  id: Schema.String,
  mail_type: Schema.Literal("MARKETING", "TRANSACTIONAL"),
  website_url: Schema.String,
  use_case_description: Schema.String,
  status: Schema.Literal("PENDING", "GRANTED", "DENIED"),
  reason: Schema.optional(Schema.String),
  created_at: Schema.String
}

export const EventRow = Schema.Struct({
  event_id: Schema.String,
  message_id: Schema.String,
  type: EventType,
  recipient: Schema.optional(Schema.String),
  detail: Schema.String,
  created_at: Schema.String
})

const Counts = Schema.Struct({ sent: Schema.Int, delivered: Schema.Int, bounced: Schema.Int, complained: Schema.Int, rejected: Schema.Int })

const ok = { success: Schema.Literal(true) }
const IdentityPath = Schema.Struct({ id: Schema.String })
const NamePath = Schema.Struct({ name: Schema.String })
const EmailPath = Schema.Struct({ email: Schema.String })

/**
 * The partner e-mail API (docs/partner-email.md): a small SES-shaped service. Every list pages by
 * signed cursor (`limit`, `next_cursor`); a partner sees only its own rows (another's are 404).
 */
export class PartnerEmailApi extends HttpApiGroup.make("partnerEmail")
  .add(
    HttpApiEndpoint.post("createIdentity", "/identities")
      .setPayload(Schema.Struct({ identity: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(320)) }))
      .addSuccess(Schema.Struct({ ...ok, ...Identity }))
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
      .annotate(OpenApi.Description, "An address (verified by the link Herald mails to it) or a domain (three DKIM tokens to publish; verified by Herald's operator).")
  )
  .add(
    HttpApiEndpoint.get("listIdentities", "/identities")
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Schema.Struct({ ...pageFields, identities: Schema.Array(Schema.Struct(Identity)) }))
      .addError(InvalidCursorResponse)
  )
  .add(
    HttpApiEndpoint.get("getIdentity", "/identities/:id").setPath(IdentityPath)
      .addSuccess(Schema.Struct({ ...ok, ...Identity }))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.del("deleteIdentity", "/identities/:id").setPath(IdentityPath)
      .addSuccess(Schema.Struct(ok))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.post("createConfigurationSet", "/configuration-sets")
      .setPayload(Schema.Struct({ name: SetName, event_destinations: Schema.optional(Schema.Array(DestinationInput).pipe(Schema.maxItems(10))) }))
      .addSuccess(Schema.Struct({ ...ok, ...ConfigurationSet }))
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
  )
  .add(
    HttpApiEndpoint.get("listConfigurationSets", "/configuration-sets")
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Schema.Struct({ ...pageFields, configuration_sets: Schema.Array(Schema.Struct(ConfigurationSet)) }))
      .addError(InvalidCursorResponse)
  )
  .add(
    HttpApiEndpoint.get("getConfigurationSet", "/configuration-sets/:name").setPath(NamePath)
      .addSuccess(Schema.Struct({ ...ok, ...ConfigurationSet }))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.patch("updateConfigurationSet", "/configuration-sets/:name").setPath(NamePath)
      .setPayload(Schema.Struct({ event_destinations: Schema.Array(DestinationInput).pipe(Schema.maxItems(10)) }))
      .addSuccess(Schema.Struct({ ...ok, ...ConfigurationSet }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .annotate(OpenApi.Description, "Replaces the set's destinations: one with a destination_id is kept (URL and events updated), one without is created, one left out is removed.")
  )
  .add(
    HttpApiEndpoint.del("deleteConfigurationSet", "/configuration-sets/:name").setPath(NamePath)
      .addSuccess(Schema.Struct(ok))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.post("createTemplate", "/templates")
      .setPayload(Schema.Struct({ name: SetName, ...TemplateBody }))
      .addSuccess(Schema.Struct({ ...ok, ...Template }))
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
      .annotate(OpenApi.Description, "`{{var}}` placeholders are filled from a send's template.data; in the html part the values are HTML-escaped.")
  )
  .add(
    HttpApiEndpoint.get("listTemplates", "/templates")
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Schema.Struct({ ...pageFields, templates: Schema.Array(Schema.Struct(Template)) }))
      .addError(InvalidCursorResponse)
  )
  .add(
    HttpApiEndpoint.get("getTemplate", "/templates/:name").setPath(NamePath)
      .addSuccess(Schema.Struct({ ...ok, ...Template }))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.put("updateTemplate", "/templates/:name").setPath(NamePath)
      .setPayload(Schema.Struct(TemplateBody))
      .addSuccess(Schema.Struct({ ...ok, ...Template }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.del("deleteTemplate", "/templates/:name").setPath(NamePath)
      .addSuccess(Schema.Struct(ok))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.get("listSuppression", "/suppression")
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Schema.Struct({ ...pageFields, suppression: Schema.Array(Schema.Struct(Suppressed)) }))
      .addError(InvalidCursorResponse)
  )
  .add(
    HttpApiEndpoint.get("getSuppression", "/suppression/:email").setPath(EmailPath)
      .addSuccess(Schema.Struct({ ...ok, ...Suppressed }))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.put("putSuppression", "/suppression/:email").setPath(EmailPath)
      .setPayload(Schema.Struct({ reason: Schema.optional(Schema.Literal("BOUNCE", "COMPLAINT", "MANUAL")) }))
      .addSuccess(Schema.Struct({ ...ok, ...Suppressed }))
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.del("deleteSuppression", "/suppression/:email").setPath(EmailPath)
      .addSuccess(Schema.Struct(ok))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.post("sendEmail", "/emails")
      .setPayload(Schema.Struct({
        from: Address,
        to: Addresses,
        cc: Schema.optional(Addresses),
        bcc: Schema.optional(Addresses),
        reply_to: Schema.optional(Schema.Union(Address, Addresses)),
        subject: Schema.optional(Schema.String.pipe(Schema.maxLength(998))),
        text: Schema.optional(Schema.String.pipe(Schema.maxLength(512_000))),
        html: Schema.optional(Schema.String.pipe(Schema.maxLength(512_000))),
        template: Schema.optional(Schema.Struct({
          name: Schema.String.pipe(Schema.maxLength(64)),
          data: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), { default: () => ({}) })
        })),
        configuration_set: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
        tags: Schema.optional(Schema.Record({ key: Schema.String.pipe(Schema.maxLength(256)), value: Schema.String.pipe(Schema.maxLength(256)) }))
      }))
      .addSuccess(Schema.Struct({ ...ok, message_id: Schema.String }), { status: 202 })
      .addError(InvalidRequestResponse)
      .addError(QuotaExceededResponse)
      .addError(ServiceUnavailableResponse)
      .annotate(OpenApi.Description, "Queued for the partner's mailer: `from` must be a verified identity; in the sandbox every recipient too. Recipients count against the daily quota when accepted.")
  )
  .add(
    HttpApiEndpoint.get("getEmail", "/emails/:message_id").setPath(Schema.Struct({ message_id: Schema.String }))
      .addSuccess(Schema.Struct({
        ...ok,
        message_id: Schema.String,
        from: Schema.String,
        to: Schema.Array(Schema.String),
        subject: Schema.String,
        status: Schema.Literal("QUEUED", "SENT", "DELIVERED", "BOUNCED", "COMPLAINED", "REJECTED", "SUPPRESSED"),
        events: Schema.Array(EventRow),
        created_at: Schema.String
      }))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/events")
      .setUrlParams(Schema.Struct({ ...PageQuery, type: Schema.optional(EventType), message_id: Schema.optional(Schema.UUID) }))
      .addSuccess(Schema.Struct({ ...pageFields, events: Schema.Array(EventRow) }))
      .addError(InvalidCursorResponse)
  )
  .add(
    HttpApiEndpoint.post("requestProductionAccess", "/production-access")
      .setPayload(Schema.Struct({
        mail_type: Schema.Literal("MARKETING", "TRANSACTIONAL"),
        website_url: Schema.String.pipe(Schema.maxLength(2048)),
        use_case_description: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(5000))
      }))
      .addSuccess(Schema.Struct({ ...ok, ...AccessRequest }))
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
  )
  .add(
    HttpApiEndpoint.get("listProductionAccess", "/production-access")
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Schema.Struct({ ...pageFields, production_access: Schema.Array(Schema.Struct(AccessRequest)) }))
      .addError(InvalidCursorResponse)
  )
  .add(
    HttpApiEndpoint.get("quotas", "/quotas")
      .addSuccess(Schema.Struct({
        max_24_hour_send: Schema.Int,
        max_send_rate: Schema.Int,
        sent_last_24_hours: Schema.Int,
        production_access_enabled: Schema.Boolean
      }))
  )
  .add(
    HttpApiEndpoint.get("stats", "/stats")
      .addSuccess(Schema.Struct({ ...ok, stats: Schema.Struct({ last_24_hours: Counts, last_14_days: Counts }) }))
  )
  .add(
    HttpApiEndpoint.get("reputation", "/reputation")
      .addSuccess(Schema.Struct({ bounce_rate: Schema.Number, complaint_rate: Schema.Number, status: Schema.Literal("HEALTHY", "WARNING", "PROBATION") }))
  )
  .middleware(PartnerAuthentication)
  .prefix("/api/v1/partner/email") {}

/** The link of a verification mail: the token is the credential, so no key. */
export class PartnerEmailVerifyApi extends HttpApiGroup.make("partnerEmailVerify")
  .add(
    HttpApiEndpoint.get("verify", "/verify")
      .setUrlParams(Schema.Struct({ token: Schema.String.pipe(Schema.maxLength(128)) }))
      .addSuccess(Schema.Struct({ ...ok, identity: Schema.String, status: Schema.Literal("VERIFIED") }))
      .addError(NotFoundResponse)
  )
  .prefix("/api/v1/partner/email") {}
