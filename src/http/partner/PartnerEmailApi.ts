import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { InvalidCursor, pageFields, PageQuery } from "../../email/cursorPage.ts"
import { EVENT_TYPES, QuotaExceeded } from "../../email/model.ts"
import { InvalidApiKeyResponse } from "../Authentication.ts"
import { ConflictResponse, errorResponse, InvalidRequestResponse, NotFoundResponse, ServiceUnavailableResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"

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

/** Who may call every operation of the group, said once. */
const PARTNER_KEY = "With the partner's key (`Authorization: Bearer pk_partner_…`)."
const PAGED = "Newest first, paged by cursor: pass the answer's `next_cursor` back as the query parameter `next_cursor` (not `cursor`, which is 400 like any parameter the list does not take) until an answer has none."

const Address = Schema.String.pipe(Schema.maxLength(320))
const Addresses = Schema.Array(Address).pipe(Schema.maxItems(50))
const EventType = Schema.Literal(...EVENT_TYPES).annotations({
  description: "SEND: the message was accepted (one per message, no recipient). Per recipient: DELIVERY (the receiving server took it), " +
    "BOUNCE (refused for good, or still failing after the retries), COMPLAINT (a complaint after its delivery), REJECT (the relay refused " +
    "the message whole, for its sender or content; also the message's own event when suppression left no recipient), SUPPRESSED (dropped: " +
    "the address is on the suppression list)."
})

const Identity = {
  id: Schema.String.annotations({ description: "The identity's id." }),
  identity: Schema.String.annotations({ description: "The address or domain, lower-case." }),
  type: Schema.Literal("EMAIL_ADDRESS", "DOMAIN").annotations({
    description: "EMAIL_ADDRESS: one address. DOMAIN: a domain; once verified it covers every address at it, and mail from it is DKIM-signed."
  }),
  status: Schema.Literal("PENDING", "VERIFIED", "FAILED").annotations({
    description: "PENDING until verified. VERIFIED: mail may be sent from it (and, in the sandbox, to it). FAILED: the relay refused the " +
      "verification mail for good, so the address cannot be verified."
  }),
  dkim_tokens: Schema.optional(Schema.Array(Schema.String)).annotations({
    description: "A domain's three DKIM tokens, one record name `<token>._domainkey.<domain>` each, as SES's Easy DKIM gives out. Herald does " +
      "not look up DNS: its operator marks the domain verified. The first token is the selector Herald signs with. Absent for an address."
  }),
  created_at: Schema.String.annotations({ description: "When it was added (ISO 8601, UTC, to the millisecond)." })
}

const Destination = Schema.Struct({
  destination_id: Schema.String.annotations({ description: "The destination's id: give it back in PATCH to keep the destination." }),
  url: Schema.String.annotations({ description: "Where the events are POSTed." }),
  events: Schema.Array(EventType).annotations({ description: "The event types POSTed to it." }),
  secret: Schema.optional(Schema.String).annotations({
    description: "The signing secret (`whsec_…`) of the Standard Webhooks signature: answered only by the request that created the destination."
  })
}).annotations({ description: "An event destination: a URL the events of the set's mail are POSTed to." })

const ConfigurationSet = {
  name: Schema.String.annotations({ description: "The set's name, unique per partner: a send names it in configuration_set." }),
  event_destinations: Schema.Array(Destination).annotations({ description: "Where the events of mail sent with the set go, oldest first." }),
  created_at: Schema.String.annotations({ description: "When the set was created (ISO 8601, UTC)." })
}

const DestinationInput = Schema.Struct({
  destination_id: Schema.optional(Schema.String).annotations({
    description: "A destination of the set to keep (its URL and events become these); absent: a new destination. Refused when the set is created."
  }),
  url: Schema.String.pipe(
    Schema.maxLength(2048),
    describe("Where to POST the events: an absolute http or https URL of at most 2,048 characters, without credentials, not a private or " +
      "loopback address (unless Herald is configured to allow them).")
  ),
  events: Schema.Array(EventType).pipe(Schema.minItems(1), describe("The event types to POST there: at least one."))
}).annotations({ description: "An event destination of the set." })

const SetName = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/)).annotations({
  description: "1 to 64 letters, digits, _ and -"
})

const Template = {
  name: Schema.String.annotations({ description: "The template's name, unique per partner: a send names it in template.name." }),
  subject: Schema.String.annotations({ description: "The subject line, with its `{{var}}` placeholders." }),
  html: Schema.optional(Schema.String.annotations({ description: "The HTML part; absent when the template has none." })),
  text: Schema.optional(Schema.String.annotations({ description: "The plain-text part; absent when the template has none." })),
  created_at: Schema.String.annotations({ description: "When the template was created (ISO 8601, UTC)." })
}

const TemplateBody = {
  subject: Schema.String.pipe(
    Schema.minLength(1),
    Schema.maxLength(998),
    describe("The subject line, 1 to 998 characters and not blank. `{{var}}` placeholders are filled as they are; line breaks become spaces.")
  ),
  html: Schema.optional(Schema.String.pipe(
    Schema.maxLength(512_000),
    describe("The HTML part, at most 512,000 characters; the values filled into its placeholders are HTML-escaped. Empty or absent: no HTML part.")
  )),
  text: Schema.optional(Schema.String.pipe(
    Schema.maxLength(512_000),
    describe("The plain-text part, at most 512,000 characters. Empty or absent: no text part. A template needs html or text (or both).")
  ))
}

const Suppressed = {
  email: Schema.String.annotations({ description: "The suppressed address, lower-case." }),
  reason: Schema.Literal("BOUNCE", "COMPLAINT", "MANUAL").annotations({
    description: "Why it is listed: BOUNCE (a hard bounce), COMPLAINT (a complaint) or MANUAL (the partner added it)."
  }),
  created_at: Schema.String.annotations({ description: "When the address was first listed (ISO 8601, UTC); a later PUT keeps it." })
}

const MailType = Schema.Literal("MARKETING", "TRANSACTIONAL")

const AccessRequest = {
  id: Schema.String.annotations({ description: "The request's id." }),
  mail_type: MailType.annotations({ description: "The kind of mail the partner sends: MARKETING or TRANSACTIONAL." }),
  website_url: Schema.String.annotations({ description: "The partner's website, as given (empty on a grant the operator made without a request)." }),
  use_case_description: Schema.String.annotations({ description: "What the partner said it sends, and to whom." }),
  status: Schema.Literal("PENDING", "GRANTED", "DENIED").annotations({
    description: "PENDING until Herald's operator decides; GRANTED (the sandbox is lifted) or DENIED."
  }),
  reason: Schema.optional(Schema.String.annotations({ description: "The reason the operator gave with the decision, if any." })),
  created_at: Schema.String.annotations({ description: "When the request was made (ISO 8601, UTC)." })
}

export const EventRow = Schema.Struct({
  event_id: Schema.String.annotations({ description: "The event's id, derived from its message, recipient and type: an outcome recorded twice is one event." }),
  message_id: Schema.String.annotations({ description: "The message it is about (the message_id POST /emails answered)." }),
  type: EventType,
  recipient: Schema.NullOr(Schema.String).annotations({
    description: "The recipient it is about; null on SEND and on the REJECT of a message that suppression left without recipients (every row has " +
      "every field)."
  }),
  detail: Schema.String.annotations({
    description: "What happened, for a person: the relay's answer on DELIVERY and REJECT, `hard: <the server's answer>` or `soft` on BOUNCE, " +
      "the report's text on COMPLAINT, the number of recipients on SEND."
  }),
  created_at: Schema.String.annotations({ description: "When it was recorded (ISO 8601, UTC, to the millisecond)." })
}).annotations({ description: "Something that happened to a message or to one of its recipients." })

const count = (what: string) => Schema.Int.annotations({ description: what })

const Counts = Schema.Struct({
  sent: count("Recipients of accepted messages, suppressed ones left out."),
  delivered: count("DELIVERY events."),
  bounced: count("BOUNCE events, hard and soft."),
  complained: count("COMPLAINT events."),
  rejected: count("REJECT events of a recipient (the relay refused the message).")
})

const ok = { success: Schema.Literal(true) }
const IdentityPath = Schema.Struct({ id: Schema.String.annotations({ description: "The identity's id (another partner's, or one that is not a UUID, is 404)." }) })
const SetNamePath = Schema.Struct({ name: Schema.String.annotations({ description: "The configuration set's name." }) })
const TemplateNamePath = Schema.Struct({ name: Schema.String.annotations({ description: "The template's name." }) })
const EmailPath = Schema.Struct({ email: Schema.String.annotations({ description: "The address, matched without case." }) })

const ADDRESS_IDENTITY = {
  id: "1b2c3d4e-5f60-4718-89ab-cdef01234567",
  identity: "hello@acme.example",
  type: "EMAIL_ADDRESS",
  status: "VERIFIED",
  created_at: "2026-03-01T09:30:00.123Z"
}

const DOMAIN_IDENTITY = {
  id: "7c6b5a49-3827-4165-a4b3-c2d1e0f9a8b7",
  identity: "acme.example",
  type: "DOMAIN",
  status: "PENDING",
  dkim_tokens: ["4f3c2a1b0e9d8c7b6a5f4e3d2c1b0a99", "b7e6d5c4a3f2e1d0c9b8a7f6e5d4c3b2", "0a1b2c3d4e5f60718293a4b5c6d7e8f9"],
  created_at: "2026-03-01T09:25:00.654Z"
}

const DESTINATION = {
  destination_id: "9e8d7c6b-5a49-4838-a726-1504f3e2d1c0",
  url: "https://hooks.acme.example/herald/email-events",
  events: ["DELIVERY", "BOUNCE", "COMPLAINT"]
}

const CONFIGURATION_SET = { name: "transactional", event_destinations: [DESTINATION], created_at: "2026-03-01T10:00:00.000Z" }

const TEMPLATE = {
  name: "order-shipped",
  subject: "Your order {{order.id}} has shipped",
  html: "<p>Hi {{name}}, your order {{order.id}} is on its way.</p>",
  text: "Hi {{name}}, your order {{order.id}} is on its way.",
  created_at: "2026-03-01T10:05:00.000Z"
}

const SUPPRESSED = { email: "old-address@inbox.example", reason: "BOUNCE", created_at: "2026-03-02T08:12:45.000Z" }

const MESSAGE_ID = "2b1d4c6e-8f0a-4b2c-9d4e-6f8a0b2c4d6e"

const SEND_EVENT = {
  event_id: "3a9f6c21-7d4e-5b80-9c1d-2e3f4a5b6c7d",
  message_id: MESSAGE_ID,
  type: "SEND",
  recipient: null,
  detail: "1 recipient(s)",
  created_at: "2026-03-02T10:15:30.123Z"
}

const DELIVERY_EVENT = {
  event_id: "5d8f2a71-3c4e-5b69-8a7d-0e1f2a3b4c5d",
  message_id: MESSAGE_ID,
  type: "DELIVERY",
  recipient: "priya@inbox.example",
  detail: "250 OK: message queued",
  created_at: "2026-03-02T10:15:31.456Z"
}

const ACCESS_REQUEST = {
  id: "6e5d4c3b-2a19-4f08-b7e6-d5c4b3a29180",
  mail_type: "TRANSACTIONAL",
  website_url: "https://acme.example",
  use_case_description: "Order confirmations and shipping notices to customers who bought on acme.example. Bounced and complaining " +
    "addresses are removed from our lists.",
  status: "PENDING",
  created_at: "2026-03-03T09:00:00.000Z"
}

/**
 * The partner e-mail API (docs/partner-email.md): a small SES-shaped service. Every list pages by
 * signed cursor (`limit`, `next_cursor`); a partner sees only its own rows (another's are 404).
 */
export class PartnerEmailApi extends HttpApiGroup.make("partnerEmail")
  .add(
    HttpApiEndpoint.post("createIdentity", "/identities")
      .setPayload(Schema.Struct({
        identity: Schema.String.pipe(
          Schema.minLength(1),
          Schema.maxLength(320),
          describe("An address (`hello@acme.example`) or a domain (`acme.example`): one with an @ is an address. Bare, without a display " +
            "name; stored lower-case.")
        )
      }))
      .addSuccess(Schema.Struct({ ...ok, ...Identity }))
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Add a sending identity",
        description: `${PARTNER_KEY} An identity is what mail may be sent from. An address is verified by the link Herald mails to it ` +
          "from no-reply@herald.local (GET /verify; the link works once); if the relay refuses that mail for good, the identity is FAILED. " +
          "A domain gets three DKIM tokens to publish; Herald does not look up DNS, so Herald's operator marks it verified. A verified " +
          "domain covers every address at it, and mail from it is DKIM-signed. The answer is PENDING. An identity the partner already has " +
          "is 409 `conflict`; one that is neither an address nor a domain name is 400 `invalid_request`.",
        request: { identity: "hello@acme.example" },
        responses: {
          address: { summary: "An address", value: { success: true, ...ADDRESS_IDENTITY, status: "PENDING" } },
          domain: { summary: "A domain, with its DKIM tokens", value: { success: true, ...DOMAIN_IDENTITY } }
        },
        returns: "The new identity, PENDING."
      }))
  )
  .add(
    HttpApiEndpoint.get("listIdentities", "/identities")
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Schema.Struct({
        ...pageFields,
        identities: Schema.Array(Schema.Struct(Identity)).annotations({ description: "The partner's identities, newest first." })
      }))
      .addError(InvalidCursorResponse)
      .annotateContext(documented({
        summary: "List the sending identities",
        description: `${PARTNER_KEY} ${PAGED}`,
        response: { success: true, identities: [ADDRESS_IDENTITY, DOMAIN_IDENTITY], count: 2 },
        returns: "A page of identities."
      }))
  )
  .add(
    HttpApiEndpoint.get("getIdentity", "/identities/:id").setPath(IdentityPath)
      .addSuccess(Schema.Struct({ ...ok, ...Identity }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read a sending identity",
        description: `${PARTNER_KEY} One identity, with its status (and a domain's DKIM tokens).`,
        response: { success: true, ...DOMAIN_IDENTITY },
        returns: "The identity."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteIdentity", "/identities/:id").setPath(IdentityPath)
      .addSuccess(Schema.Struct(ok))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Delete a sending identity",
        description: `${PARTNER_KEY} The identity is gone: it no longer makes a sender (nor, in the sandbox, a recipient) verified; a ` +
          "domain's addresses lose it too. A second DELETE is 404.",
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .add(
    HttpApiEndpoint.post("createConfigurationSet", "/configuration-sets")
      .setPayload(Schema.Struct({
        name: SetName.pipe(describe("The set's name: 1 to 64 letters, digits, _ and -, unique per partner.")),
        event_destinations: Schema.optional(Schema.Array(DestinationInput).pipe(
          Schema.maxItems(10),
          describe("Where to POST the events of mail sent with the set: at most 10 destinations, none by default.")
        ))
      }))
      .addSuccess(Schema.Struct({ ...ok, ...ConfigurationSet }))
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Create a configuration set",
        description: `${PARTNER_KEY} A configuration set is a name a send may carry (\`configuration_set\`) and the event destinations its ` +
          "mail's events are POSTed to: Standard Webhooks requests with the body `{event_id, type: \"email.<type lower-case>\", occurred_at, " +
          "delivery_id, data: <the event row>}`, signed with the destination's `whsec_…` secret, retried at 1 s, 5 s and 30 s, then kept as a " +
          "dead letter. Each new destination's secret is answered this once. A name the partner already uses is 409 `conflict`; a bad URL " +
          "or a destination_id (a new set has no destinations to keep) is 400 `invalid_request`.",
        request: { name: "transactional", event_destinations: [{ url: DESTINATION.url, events: DESTINATION.events }] },
        response: {
          success: true,
          ...CONFIGURATION_SET,
          event_destinations: [{ ...DESTINATION, secret: "whsec_yLuB8pg8Z2mXwcPIFIgfoJaYpRYZX7uq" }]
        },
        returns: "The new set, with the secrets of its destinations (shown this once)."
      }))
  )
  .add(
    HttpApiEndpoint.get("listConfigurationSets", "/configuration-sets")
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Schema.Struct({
        ...pageFields,
        configuration_sets: Schema.Array(Schema.Struct(ConfigurationSet)).annotations({ description: "The partner's configuration sets, newest first." })
      }))
      .addError(InvalidCursorResponse)
      .annotateContext(documented({
        summary: "List the configuration sets",
        description: `${PARTNER_KEY} ${PAGED} Destinations are shown without their secrets.`,
        response: { success: true, configuration_sets: [CONFIGURATION_SET], count: 1 },
        returns: "A page of configuration sets."
      }))
  )
  .add(
    HttpApiEndpoint.get("getConfigurationSet", "/configuration-sets/:name").setPath(SetNamePath)
      .addSuccess(Schema.Struct({ ...ok, ...ConfigurationSet }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read a configuration set",
        description: `${PARTNER_KEY} The set and its destinations, without their secrets. A name the partner has no set of is 404.`,
        response: { success: true, ...CONFIGURATION_SET },
        returns: "The configuration set."
      }))
  )
  .add(
    HttpApiEndpoint.patch("updateConfigurationSet", "/configuration-sets/:name").setPath(SetNamePath)
      .setPayload(Schema.Struct({
        event_destinations: Schema.Array(DestinationInput).pipe(
          Schema.maxItems(10),
          describe("The set's destinations from now on, at most 10: the whole list, not a change to it (an empty list removes them all).")
        )
      }))
      .addSuccess(Schema.Struct({ ...ok, ...ConfigurationSet }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Replace a configuration set's destinations",
        description: `${PARTNER_KEY} Replaces the set's destinations: one given with its destination_id is kept (its URL and events become ` +
          "the ones given), one without is created (its secret answered this once), one left out is removed. A destination_id that is " +
          "not one of the set's is 400 `invalid_request`. Concurrent replacements apply one after the other.",
        request: {
          event_destinations: [
            { destination_id: DESTINATION.destination_id, url: DESTINATION.url, events: ["DELIVERY", "BOUNCE", "COMPLAINT", "REJECT"] },
            { url: "https://analytics.acme.example/email-opens", events: ["DELIVERY"] }
          ]
        },
        response: {
          success: true,
          ...CONFIGURATION_SET,
          event_destinations: [
            { ...DESTINATION, events: ["DELIVERY", "BOUNCE", "COMPLAINT", "REJECT"] },
            {
              destination_id: "4c3b2a19-0f8e-4d7c-9b6a-5f4e3d2c1b0a",
              url: "https://analytics.acme.example/email-opens",
              events: ["DELIVERY"],
              secret: "whsec_y0bHzOpNX3KExnRHIuGdBv/74J3BsfwZ"
            }
          ]
        },
        returns: "The set as it is now, with the secrets of the destinations just created."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteConfigurationSet", "/configuration-sets/:name").setPath(SetNamePath)
      .addSuccess(Schema.Struct(ok))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Delete a configuration set",
        description: `${PARTNER_KEY} The set and its destinations are removed: no more events are POSTed to them, and a send that names the ` +
          "set is 400 `invalid_request`. A second DELETE is 404.",
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .add(
    HttpApiEndpoint.post("createTemplate", "/templates")
      .setPayload(Schema.Struct({ name: SetName.pipe(describe("The template's name: 1 to 64 letters, digits, _ and -, unique per partner.")), ...TemplateBody }))
      .addSuccess(Schema.Struct({ ...ok, ...Template }))
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Create an e-mail template",
        description: `${PARTNER_KEY} A subject and an html and/or text part whose \`{{var}}\` placeholders (also \`{{ var }}\`, and dotted ` +
          "paths such as `{{user.name}}`) are filled from a send's template.data. In the html part the values are HTML-escaped; the " +
          "subject and text take them as they are. A send whose data lacks a placeholder's value is refused. A name the partner already " +
          "uses is 409 `conflict`.",
        request: { name: TEMPLATE.name, subject: TEMPLATE.subject, html: TEMPLATE.html, text: TEMPLATE.text },
        response: { success: true, ...TEMPLATE },
        returns: "The new template."
      }))
  )
  .add(
    HttpApiEndpoint.get("listTemplates", "/templates")
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Schema.Struct({
        ...pageFields,
        templates: Schema.Array(Schema.Struct(Template)).annotations({ description: "The partner's templates, newest first." })
      }))
      .addError(InvalidCursorResponse)
      .annotateContext(documented({
        summary: "List the e-mail templates",
        description: `${PARTNER_KEY} ${PAGED}`,
        response: { success: true, templates: [TEMPLATE], count: 1 },
        returns: "A page of templates."
      }))
  )
  .add(
    HttpApiEndpoint.get("getTemplate", "/templates/:name").setPath(TemplateNamePath)
      .addSuccess(Schema.Struct({ ...ok, ...Template }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read an e-mail template",
        description: `${PARTNER_KEY} A name the partner has no template of is 404.`,
        response: { success: true, ...TEMPLATE },
        returns: "The template."
      }))
  )
  .add(
    HttpApiEndpoint.put("updateTemplate", "/templates/:name").setPath(TemplateNamePath)
      .setPayload(Schema.Struct(TemplateBody))
      .addSuccess(Schema.Struct({ ...ok, ...Template }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Replace an e-mail template",
        description: `${PARTNER_KEY} The subject and both parts are replaced: a part left out is removed. The name stays.`,
        request: { subject: "Order {{order.id}} is on its way", text: TEMPLATE.text },
        response: { success: true, name: TEMPLATE.name, subject: "Order {{order.id}} is on its way", text: TEMPLATE.text, created_at: TEMPLATE.created_at },
        returns: "The template as it is now."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteTemplate", "/templates/:name").setPath(TemplateNamePath)
      .addSuccess(Schema.Struct(ok))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Delete an e-mail template",
        description: `${PARTNER_KEY} A send that names it is 400 \`invalid_request\` from then on; its name is free again. A second DELETE is 404.`,
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .add(
    HttpApiEndpoint.get("listSuppression", "/suppression")
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Schema.Struct({
        ...pageFields,
        suppression: Schema.Array(Schema.Struct(Suppressed)).annotations({ description: "The suppressed addresses, newest first." })
      }))
      .addError(InvalidCursorResponse)
      .annotateContext(documented({
        summary: "List the suppressed addresses",
        description: `${PARTNER_KEY} ${PAGED} Mail is never relayed to these addresses: a send drops them with a SUPPRESSED event. Hard ` +
          "bounces and complaints add addresses themselves; soft bounces never do.",
        response: { success: true, suppression: [SUPPRESSED], count: 1 },
        returns: "A page of suppressed addresses."
      }))
  )
  .add(
    HttpApiEndpoint.get("getSuppression", "/suppression/:email").setPath(EmailPath)
      .addSuccess(Schema.Struct({ ...ok, ...Suppressed }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Check whether an address is suppressed",
        description: `${PARTNER_KEY} An address not on the list (or not an address) is 404.`,
        response: { success: true, ...SUPPRESSED },
        returns: "The address's entry on the list."
      }))
  )
  .add(
    HttpApiEndpoint.put("putSuppression", "/suppression/:email").setPath(EmailPath)
      .setPayload(Schema.Struct({
        reason: Schema.optional(Schema.Literal("BOUNCE", "COMPLAINT", "MANUAL").annotations({ description: "Why the address is listed: MANUAL by default." }))
      }))
      .addSuccess(Schema.Struct({ ...ok, ...Suppressed }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Suppress an address",
        description: `${PARTNER_KEY} Adds the address to the suppression list, or gives a listed one the new reason (it keeps its ` +
          "created_at and its place in the list). Path text that is not an e-mail address is 400 `invalid_request`.",
        request: { reason: "MANUAL" },
        response: { success: true, email: "unsubscribed@inbox.example", reason: "MANUAL", created_at: "2026-03-02T09:00:00.000Z" },
        returns: "The address's entry on the list."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteSuppression", "/suppression/:email").setPath(EmailPath)
      .addSuccess(Schema.Struct(ok))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Remove an address from the suppression list",
        description: `${PARTNER_KEY} Mail to the address is relayed again from then on. An address not on the list is 404.`,
        response: { success: true },
        returns: "Removed."
      }))
  )
  .add(
    HttpApiEndpoint.post("sendEmail", "/emails")
      .setPayload(Schema.Struct({
        from: Address.pipe(describe("The sender: a bare address (no display name) that is a verified identity of the partner, or is at a verified domain.")),
        to: Addresses.pipe(describe("The recipients, bare addresses. to, cc and bcc together: at least one, at most 50 different addresses.")),
        cc: Schema.optional(Addresses.pipe(describe("Copy recipients, shown in the message's headers."))),
        bcc: Schema.optional(Addresses.pipe(describe("Blind copy recipients: sent to, never shown in the headers."))),
        reply_to: Schema.optional(Schema.Union(Address, Addresses).pipe(describe("Where replies go: one address or a list of them."))),
        subject: Schema.optional(Schema.String.pipe(
          Schema.maxLength(998),
          describe("The subject line, at most 998 characters; line breaks become spaces. Required (not blank) without a template; absent with one.")
        )),
        text: Schema.optional(Schema.String.pipe(
          Schema.maxLength(512_000),
          describe("The plain-text body, at most 512,000 characters. Without a template, text or html (or both) is required.")
        )),
        html: Schema.optional(Schema.String.pipe(Schema.maxLength(512_000), describe("The HTML body, at most 512,000 characters."))),
        template: Schema.optional(Schema.Struct({
          name: Schema.String.pipe(Schema.maxLength(64), describe("The name of one of the partner's templates (POST /templates).")),
          data: Schema.optionalWith(
            Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
              description: "The values of the template's placeholders, by name; `{{user.name}}` reads `user` then `name`. Strings, numbers and " +
                "booleans are filled as text, null as nothing; an object, an array or a missing value is 400. Default: {}."
            }),
            { default: () => ({}) }
          )
        }).annotations({ description: "A stored template to fill, instead of subject, text and html." })),
        configuration_set: Schema.optional(Schema.String.pipe(
          Schema.maxLength(64),
          describe("The name of one of the partner's configuration sets: the message's events are POSTed to its destinations.")
        )),
        tags: Schema.optional(Schema.Record({ key: Schema.String.pipe(Schema.maxLength(256)), value: Schema.String.pipe(Schema.maxLength(256)) }).annotations({
          description: "Name-value pairs kept with the message (names and values at most 256 characters each)."
        }))
      }))
      .addSuccess(
        Schema.Struct({
          ...ok,
          message_id: Schema.String.annotations({ description: "The message's id: read it with GET /emails/{message_id}; its events carry it." })
        }),
        { status: 202 }
      )
      .addError(InvalidRequestResponse)
      .addError(QuotaExceededResponse)
      .addError(ServiceUnavailableResponse)
      .annotateContext(documented({
        summary: "Send an e-mail",
        description: `${PARTNER_KEY} Queues the message for the partner's mailer, which relays it to each recipient. Either \`template\` or ` +
          "`subject` plus `text` and/or `html`. `from` must be a verified identity of the partner (or at a verified domain); in the " +
          "sandbox, until production access is granted, every recipient must be one too. Addresses are bare and stored lower-case. The " +
          "problems of the body (addresses, content, template, configuration set) are named together in one 400 `invalid_request`; an " +
          "unverified sender or sandbox recipient is a 400 of its own. Nothing is sent on a 400.\n\n" +
          "All the recipients count against the 24-hour quota when the send is accepted; a send that would cross it is refused whole (429 " +
          "`quota_exceeded`). The send rate is paced, never refused. Suppressed recipients are dropped with a SUPPRESSED event. A 503 " +
          "`service_unavailable` means the mailer did not answer in time: the send may still go out. Takes an Idempotency-Key.",
        request: {
          from: "hello@acme.example",
          to: ["priya@inbox.example"],
          reply_to: "support@acme.example",
          subject: "Your order 1042 has shipped",
          text: "Hi Priya, your order 1042 is on its way.",
          html: "<p>Hi Priya, your order 1042 is on its way.</p>",
          configuration_set: "transactional",
          tags: { campaign: "order-updates" }
        },
        response: { success: true, message_id: MESSAGE_ID },
        returns: "Accepted: the message is recorded and will be relayed."
      }))
  )
  .add(
    HttpApiEndpoint.get("getEmail", "/emails/:message_id")
      .setPath(Schema.Struct({ message_id: Schema.String.annotations({ description: "The message's id, as POST /emails answered it." }) }))
      .addSuccess(Schema.Struct({
        ...ok,
        message_id: Schema.String.annotations({ description: "The message's id." }),
        from: Schema.String.annotations({ description: "The sender, lower-case." }),
        to: Schema.Array(Schema.String).annotations({ description: "The to recipients, lower-case (cc and bcc are not shown)." }),
        subject: Schema.String.annotations({ description: "The subject as sent (a template's, filled)." }),
        status: Schema.Literal("QUEUED", "SENT", "DELIVERED", "BOUNCED", "COMPLAINED", "REJECTED", "SUPPRESSED").annotations({
          description: "QUEUED when accepted, then SENT while any recipient is still queued or being relayed. Once none is: COMPLAINED if " +
            "any recipient complained, else DELIVERED if any was delivered, else BOUNCED, else REJECTED. SUPPRESSED: every recipient was suppressed."
        }),
        events: Schema.Array(EventRow).annotations({ description: "What happened to it, oldest first." }),
        created_at: Schema.String.annotations({ description: "When the send was accepted (ISO 8601, UTC)." })
      }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read a sent e-mail and its events",
        description: `${PARTNER_KEY} The message's status and every event of it. Another partner's message, or an id that is not a UUID, is 404.`,
        response: {
          success: true,
          message_id: MESSAGE_ID,
          from: "hello@acme.example",
          to: ["priya@inbox.example"],
          subject: "Your order 1042 has shipped",
          status: "DELIVERED",
          events: [SEND_EVENT, DELIVERY_EVENT],
          created_at: "2026-03-02T10:15:30.123Z"
        },
        returns: "The message."
      }))
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/events")
      .setUrlParams(Schema.Struct({
        ...PageQuery,
        type: Schema.optional(EventType.annotations({ description: "Only events of this type." })),
        message_id: Schema.optional(Schema.UUID.annotations({ description: "Only events of this message." }))
      }))
      .addSuccess(Schema.Struct({ ...pageFields, events: Schema.Array(EventRow).annotations({ description: "The events, newest first." }) }))
      .addError(InvalidCursorResponse)
      .annotateContext(documented({
        summary: "List e-mail events",
        description: `${PARTNER_KEY} Every event of the partner's mail, of one type and/or one message if asked. ${PAGED} A cursor belongs ` +
          "to its filters: pass the same type and message_id with it (another filter's cursor is 400 `invalid_cursor`).",
        response: { success: true, events: [DELIVERY_EVENT, SEND_EVENT], count: 2 },
        returns: "A page of events."
      }))
  )
  .add(
    HttpApiEndpoint.post("requestProductionAccess", "/production-access")
      .setPayload(Schema.Struct({
        mail_type: MailType.annotations({ description: "The kind of mail the partner sends: MARKETING or TRANSACTIONAL." }),
        website_url: Schema.String.pipe(
          Schema.maxLength(2048),
          describe("The partner's website: an absolute http or https URL, at most 2,048 characters. Shown to the operator, never fetched.")
        ),
        use_case_description: Schema.String.pipe(
          Schema.minLength(1),
          Schema.maxLength(5000),
          describe("What the partner sends and to whom, for the operator's review: 1 to 5,000 characters, not blank.")
        )
      }))
      .addSuccess(Schema.Struct({ ...ok, ...AccessRequest }))
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Ask for production access",
        description: `${PARTNER_KEY} Asks Herald's operator to lift the sandbox. One request may be pending at a time, and none once access ` +
          "is granted (409 `conflict`). A grant lets mail go to any recipient and raises the quotas to 50,000 recipients a day and 14 a " +
          "second (never lowering what the operator set higher); it applies within a second. Follow the decision with GET " +
          "/production-access or GET /quotas.",
        request: { mail_type: ACCESS_REQUEST.mail_type, website_url: ACCESS_REQUEST.website_url, use_case_description: ACCESS_REQUEST.use_case_description },
        response: { success: true, ...ACCESS_REQUEST },
        returns: "The request, PENDING."
      }))
  )
  .add(
    HttpApiEndpoint.get("listProductionAccess", "/production-access")
      .setUrlParams(Schema.Struct(PageQuery))
      .addSuccess(Schema.Struct({
        ...pageFields,
        production_access: Schema.Array(Schema.Struct(AccessRequest)).annotations({ description: "The partner's requests, newest first." })
      }))
      .addError(InvalidCursorResponse)
      .annotateContext(documented({
        summary: "List the production access requests",
        description: `${PARTNER_KEY} ${PAGED} Each request with its decision. A grant the operator made without a request shows as a ` +
          "GRANTED TRANSACTIONAL request with an empty website_url.",
        response: {
          success: true,
          production_access: [
            ACCESS_REQUEST,
            {
              ...ACCESS_REQUEST,
              id: "8a7b6c5d-4e3f-4a21-9b0c-1d2e3f4a5b6c",
              use_case_description: "Order e-mails.",
              status: "DENIED",
              reason: "Tell us how recipients sign up and how you handle bounces.",
              created_at: "2026-03-02T15:00:00.000Z"
            }
          ],
          count: 2
        },
        returns: "A page of requests."
      }))
  )
  .add(
    HttpApiEndpoint.get("quotas", "/quotas")
      .addSuccess(Schema.Struct({
        ...ok,
        max_24_hour_send: Schema.Int.annotations({
          description: "Recipients the partner may send to in any 24 hours: 200 in the sandbox, 50,000 after a grant, unless Herald's operator set another."
        }),
        max_send_rate: Schema.Int.annotations({
          description: "Recipients relayed per second at most (faster sends are paced, not refused): 1 in the sandbox, 14 after a grant, " +
            "unless the operator set another."
        }),
        sent_last_24_hours: Schema.Int.annotations({
          description: "Recipients of the sends accepted in the last 24 hours, as the quota counts them (suppressed ones included)."
        }),
        production_access_enabled: Schema.Boolean.annotations({ description: "Whether the partner is out of the sandbox (may send to any recipient)." })
      }))
      .annotateContext(documented({
        summary: "Read the sending quotas",
        description: `${PARTNER_KEY} The partner's limits and what the last 24 hours used of the daily one. Sends see an operator's change ` +
          "within a second.",
        response: { success: true, max_24_hour_send: 200, max_send_rate: 1, sent_last_24_hours: 12, production_access_enabled: false },
        returns: "The quotas."
      }))
  )
  .add(
    HttpApiEndpoint.get("stats", "/stats")
      .addSuccess(Schema.Struct({
        ...ok,
        stats: Schema.Struct({
          last_24_hours: Counts.annotations({ description: "The last 24 hours." }),
          last_14_days: Counts.annotations({ description: "The last 14 days." })
        }).annotations({ description: "Counts per recipient: messages by when they were accepted, events by when they were recorded." })
      }))
      .annotateContext(documented({
        summary: "Read the sending statistics",
        description: `${PARTNER_KEY} What happened to the partner's mail over the last 24 hours and the last 14 days, counted per recipient.`,
        response: {
          success: true,
          stats: {
            last_24_hours: { sent: 12, delivered: 11, bounced: 1, complained: 0, rejected: 0 },
            last_14_days: { sent: 140, delivered: 135, bounced: 4, complained: 0, rejected: 1 }
          }
        },
        returns: "The counts."
      }))
  )
  .add(
    HttpApiEndpoint.get("reputation", "/reputation")
      .addSuccess(Schema.Struct({
        ...ok,
        bounce_rate: Schema.Number.annotations({
          description: "Hard bounces over recipients sent to (not suppressed) in the last 14 days, from 0 to 1; 0 when none was sent to."
        }),
        complaint_rate: Schema.Number.annotations({ description: "Complaints over deliveries in the last 14 days, from 0 to 1; 0 without deliveries." }),
        status: Schema.Literal("HEALTHY", "WARNING", "PROBATION").annotations({
          description: "SES's thresholds: WARNING from a bounce rate of 0.05 or a complaint rate of 0.001; PROBATION from 0.1 or 0.005; HEALTHY below both."
        })
      }))
      .annotateContext(documented({
        summary: "Read the sending reputation",
        description: `${PARTNER_KEY} Bounce and complaint rates over the last 14 days and the status they give, as SES reviews accounts. ` +
          "Herald reports it and does not stop sending on it.",
        response: { success: true, bounce_rate: 0.02142857142857143, complaint_rate: 0, status: "HEALTHY" },
        returns: "The rates and their status."
      }))
  )
  .middleware(PartnerAuthentication)
  .prefix("/api/v1/partner/email")
  .annotate(
    OpenApi.Description,
    "The partner e-mail API (docs/partner-email.md): a small SES-shaped service for the platform's partners, with a partner key " +
      "(`pk_partner_…`, made by `herald admin create-partner`). Identities to send from, configuration sets and their event destinations, " +
      "templates, the suppression list, sends and their events, production access, quotas, statistics and reputation. A new partner is in " +
      "the sandbox (verified recipients only, 200 a day). Lists page by signed cursor, newest first; a partner sees only its own rows " +
      "(another's are 404)."
  ) {}

/** The link of a verification mail: the token is the credential, so no key. */
export class PartnerEmailVerifyApi extends HttpApiGroup.make("partnerEmailVerify")
  .add(
    HttpApiEndpoint.get("verify", "/verify")
      .setUrlParams(Schema.Struct({
        token: Schema.String.pipe(Schema.maxLength(128), describe("The token of the verification mail's link."))
      }))
      .addSuccess(Schema.Struct({
        ...ok,
        identity: Schema.String.annotations({ description: "The address now verified." }),
        status: Schema.Literal("VERIFIED").annotations({ description: "Always VERIFIED." })
      }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Verify an address identity",
        description: "The link of the mail Herald sends when a partner adds an address identity (POST /identities), opened by a person: " +
          "the token is the credential, so no key. It works once, and only while the identity is PENDING; an unknown or used token is 404.",
        response: { success: true, identity: "hello@acme.example", status: "VERIFIED" },
        returns: "The address is verified."
      }))
  )
  .prefix("/api/v1/partner/email")
  .annotate(
    OpenApi.Description,
    "The verification link of the partner e-mail API: Herald mails it to an address identity, and opening it verifies the address. No key."
  ) {}
