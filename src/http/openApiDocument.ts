import { type HttpApi, OpenApi, OpenApiJsonSchema } from "@effect/platform"
import { JSONSchema, Option, Schema, SchemaAST } from "effect"
import { HeraldApi } from "./Api.ts"
import { ERROR_DESCRIPTIONS } from "./errors.ts"
import { IDEMPOTENT_ROUTES } from "./idempotency/idempotentRoutes.ts"
import { answersResult } from "./resultFlag.ts"
import { WEBHOOK_EVENTS, type WebhookEvent } from "./webhookEvents.ts"

/**
 * The OpenAPI document Herald serves (GET /api/v1/openapi.json and /docs; docs/openapi.md): the
 * one HttpApi generates from the declarations (src/http/Api.ts and every group's *Api.ts, where
 * operations, fields and examples are described), finished here with what a declaration cannot
 * say:
 *
 * - the security schemes' descriptions (the middlewares declare only `bearer`/`basic`);
 * - descriptions of the fields of schemas declared outside src/http (FieldIssue, the content
 *   shapes, the Gateway error record) and of the two envelope flags every answer has (`success`,
 *   the public API's `result`);
 * - error responses: one description naming every `code` a status may carry (HttpApi keeps the
 *   first error's), and `anyOf`s without the same schema twice;
 * - the Idempotency-Key header of the writes that take it, and its two errors (the adapter answers
 *   them, around the handlers: src/http/idempotency);
 * - the `webhooks` Herald delivers (src/http/webhookEvents.ts), with the Standard Webhooks
 *   headers.
 *
 * test/http/openapi-lint.test.ts lints it with Redocly's recommended rules and
 * test/http/openapi-reference.test.ts checks that every operation, field and error is described.
 */

type Json = Record<string, any>

const SECURITY_SCHEMES: Record<string, { readonly description: string; readonly bearerFormat?: string }> = {
  bearer: {
    bearerFormat: "JWT or rcs_pk_live_… API key",
    description: "`Authorization: Bearer <token>` on /api/v1/rcs (and the owner's /api/v1/app/developer and CAPI config): a user token " +
      "(the JWT POST /api/v1/rcs/auth/login or /select-account answers), or an API key (`rcs_pk_live_…`, POST /api/v1/rcs/api-keys). " +
      "An API key reaches only the reads and sends of its scopes (403 `missing_scope`); every other operation answers it 403 " +
      "`api_key_endpoint_not_allowed`. A wrong, expired or revoked credential is 401, with `detail` saying what was wrong."
  },
  secretKey: {
    bearerFormat: "sk_live_… secret key",
    description: "`Authorization: Bearer sk_live_…`: the account's secret key (Settings, Developer; POST /api/v1/app/developer/secret-key " +
      "makes a new one and revokes the old). The credential of /api/v1/app and of GraphQL (POST /api/v1/graphql, and the graphql-ws " +
      "WebSocket's connection_init). Requests count against the plan's rate (429 `rate_limited`); the Starter plan has no API access " +
      "(403 `feature_locked`) but for GET /api/v1/app/me."
  },
  secretKeyBasic: {
    description: "`Authorization: Basic <secret key>`: the public messaging API takes the same secret key as Basic, either raw " +
      "(`Basic sk_live_…`) or as base64 of `sk_live_…:` (what HTTP clients send for a user name without password), as Interakt's " +
      "clients do. The plan's rate and Starter's lock apply as on /api/v1/app."
  },
  partnerKey: {
    bearerFormat: "pk_partner_… partner key",
    description: "`Authorization: Bearer pk_partner_…`: a partner's key for the partner e-mail API, shown once by " +
      "`herald admin create-partner`. Any other credential of Herald's (a user token, an API or secret key) is 401 `invalid_api_key`."
  }
}

const prefixed = (prefix: string, fields: Record<string, string>) => Object.fromEntries(Object.entries(fields).map(([path, text]) => [`${prefix}${path}`, text]))

const SUGGESTION_FIELDS: Record<string, string> = {
  type: "reply: a suggested reply; url: opens `url`; dial: calls `phone`.",
  text: "The chip's label, 1 to 25 characters.",
  postback_data: "What comes back in message.received's postback_data when the user taps it (at most 2,048 characters).",
  url: "The page a url suggestion opens (http or https, at most 2,048 characters).",
  phone: "The number a dial suggestion calls: E.164, '+' then 8 to 15 digits."
}

const CARD_FIELDS: Record<string, string> = {
  title: "The card's title (at most 200 characters).",
  description: "The card's text (at most 2,000 characters).",
  media: "An image or video on the card.",
  "media.url": "The media file's URL: http(s), at most 2,000 characters; jpg, jpeg, png, gif, or mp4, m4v, mpeg, mpg, webm, 3gp video; up to 100 MB.",
  "media.height": "How tall the media shows: short, medium (the default) or tall.",
  suggestions: "The card's own suggestion chips (at most 4).",
  ...prefixed("suggestions[].", SUGGESTION_FIELDS)
}

/**
 * Fields of schemas declared outside src/http (domain modules), by component and path (`a.b`
 * into objects, `[]` into arrays). src/http names these components (`identifier`: ContentApi.ts,
 * errors.ts); the descriptions say what the wire means.
 */
const COMPONENT_FIELDS: Record<string, Record<string, string>> = {
  FieldIssue: {
    path: "The field at fault, as a dotted path into the body (`rich_card.suggestions.0.text`), a path parameter's or query value's name; empty for the body as a whole.",
    message: "What is wrong with it and the form it takes, for a person (`must be an ISO 8601 date-time, such as 2026-11-24T10:00:00Z`)."
  },
  Suggestion: SUGGESTION_FIELDS,
  RichCard: CARD_FIELDS,
  Carousel: { cards: "The cards, 2 to 10, shown side by side.", ...prefixed("cards[].", CARD_FIELDS) },
  GatewayErrorRecord: {
    success: "Always false: the record of a failure.",
    message: "What went wrong, for a person (the gateway's title).",
    detail: "More about the failure, as the gateway gave it.",
    category: "What kind of problem: content, media, recipient, config, quota, gateway or unknown.",
    retryable: "Whether sending the same message again later may succeed.",
    message_id: "The message the failure is about.",
    upstream_code: "The upstream's own error code (Meta's for WhatsApp), for support and debugging."
  }
}

/** The envelope flags every 2xx answer carries, whatever the operation. */
const FLAGS: Record<string, string> = {
  success: "Always true on a 2xx answer (errors carry false, with a code).",
  result: "Always true on a 2xx answer: Interakt's flag, kept beside success for its clients."
}

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** Every schema object of the document, nested ones included (properties, items, compositions…). */
const walkSchemas = (node: unknown, visit: (schema: Json) => void, seen = new Set<unknown>()): void => {
  if (!isObject(node) && !Array.isArray(node)) return
  if (seen.has(node)) return
  seen.add(node)
  if (Array.isArray(node)) return node.forEach((item) => walkSchemas(item, visit, seen))
  if (typeof node.type === "string" || node.properties !== undefined || node.anyOf !== undefined || node.allOf !== undefined || node.oneOf !== undefined || node.$ref !== undefined) {
    visit(node)
  }
  // Examples are values, not schemas.
  for (const [key, value] of Object.entries(node)) if (key !== "example" && key !== "examples") walkSchemas(value, visit, seen)
}

const describeSecuritySchemes = (spec: Json) => {
  for (const [name, scheme] of Object.entries<Json>(spec.components.securitySchemes)) {
    const known = SECURITY_SCHEMES[name]
    if (known === undefined) continue
    scheme.description = known.description
    if (known.bearerFormat !== undefined && scheme.scheme === "bearer") scheme.bearerFormat = known.bearerFormat
  }
}

/** The object schemas a schema may be (through anyOf, allOf and $ref: optional, nullable and referenced shapes). */
const objectsOf = (spec: Json, schema: Json | undefined): Array<Json> => {
  if (!isObject(schema)) return []
  if (typeof schema.$ref === "string") return objectsOf(spec, componentOf(spec, schema))
  const members = [...(schema.anyOf ?? []), ...(schema.allOf ?? []), ...(schema.oneOf ?? [])] as Array<Json>
  return [...(isObject(schema.properties) ? [schema] : []), ...members.flatMap((member) => objectsOf(spec, member))]
}

/** Describes the property at `path` (`a.b`, `a[].b`) of a component, where the declaration did not. */
const describeAt = (spec: Json, component: string, path: string, description: string) => {
  let schemas: Array<Json> = objectsOf(spec, spec.components.schemas[component])
  const steps = path.split(".")
  steps.forEach((step, i) => {
    const name = step.replace(/\[\]$/, "")
    const last = i === steps.length - 1
    const next: Array<Json> = []
    for (const schema of schemas) {
      const property = schema.properties?.[name] as Json | undefined
      if (property === undefined) continue
      if (last) {
        if (property.description === undefined) schema.properties[name] = { ...property, description }
        continue
      }
      const target = step.endsWith("[]") ? [property, ...objectsOf(spec, property)].flatMap((s) => (isObject(s.items) ? [s.items] : [])) : [property]
      next.push(...target.flatMap((s) => objectsOf(spec, s)))
    }
    schemas = next
  })
}

const describeFields = (spec: Json) => {
  for (const [component, fields] of Object.entries(COMPONENT_FIELDS)) {
    for (const [path, description] of Object.entries(fields)) describeAt(spec, component, path, description)
  }
  walkSchemas(spec, (schema) => {
    if (!isObject(schema.properties)) return
    for (const [field, description] of Object.entries(FLAGS)) {
      const property = schema.properties[field]
      if (isObject(property) && property.description === undefined && Array.isArray(property.enum) && property.enum.length === 1 && property.enum[0] === true) {
        schema.properties[field] = { ...property, description }
      }
    }
  })
}

/** `anyOf: [A, A]` (two errors of one status sharing a component) becomes A. */
const dedupeCompositions = (spec: Json) => {
  walkSchemas(spec, (schema) => {
    if (!Array.isArray(schema.anyOf)) return
    const unique = schema.anyOf.filter((member: unknown, i: number) => schema.anyOf.findIndex((other: unknown) => JSON.stringify(other) === JSON.stringify(member)) === i)
    if (unique.length === 1 && Object.keys(schema).length === 1) {
      delete schema.anyOf
      Object.assign(schema, unique[0])
    } else schema.anyOf = unique
  })
}

const componentOf = (spec: Json, schema: Json): Json | undefined =>
  typeof schema.$ref === "string" ? spec.components.schemas[schema.$ref.split("/").pop()!] : schema

/** The error schemas a response may carry (a $ref, or an anyOf of them). */
const errorSchemas = (spec: Json, schema: Json | undefined): Array<Json> => {
  if (schema === undefined) return []
  if (Array.isArray(schema.anyOf)) return schema.anyOf.flatMap((member: Json) => errorSchemas(spec, member))
  const resolved = componentOf(spec, schema)
  return resolved === undefined ? [] : [resolved]
}

/** An error response's description: each code it may carry, with what it means. */
const describeErrorResponses = (spec: Json) => {
  for (const item of Object.values<Json>(spec.paths)) {
    for (const operation of Object.values<Json>(item)) {
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        if (!/^[45]/.test(status)) continue
        const schemas = errorSchemas(spec, response.content?.["application/json"]?.schema)
        const lines = [...new Set(schemas.flatMap((schema) => {
          const code = schema.properties?.code?.enum?.[0]
          return typeof code === "string" ? [`\`${code}\`: ${String(schema.description ?? "")}`] : []
        }))]
        if (lines.length === 1) response.description = lines[0]
        else if (lines.length > 1) response.description = lines.map((line) => `- ${line}`).join("\n")
      }
    }
  }
}

/** The writes that take an Idempotency-Key: the adapter's, and the two streamed imports (ContactImportRoute.ts keyedImport). */
const IDEMPOTENT = [...IDEMPOTENT_ROUTES, "POST /api/v1/rcs/contact-lists/{list_id}/contacts", "POST /api/v1/app/contacts/import"]

const envelopeError = (status: number, code: string, example: string) => ({
  type: "object",
  required: ["success", "code", "message"],
  properties: {
    success: { type: "boolean", enum: [false], description: "Always false on an error." },
    code: { type: "string", enum: [code], description: "The error's code: stable, for programs (message is for people)." },
    message: { type: "string", description: "What went wrong, as sentences for a person." }
  },
  additionalProperties: false,
  description: ERROR_DESCRIPTIONS[code],
  examples: [{ success: false, code, message: example }],
  "x-status": status
})

const IDEMPOTENCY_ERRORS = {
  idempotency_key_reused_error: envelopeError(422, "idempotency_key_reused", "this Idempotency-Key was used with a different request in the last 24 hours; use a new key for a new request"),
  idempotency_key_in_use_error: envelopeError(409, "idempotency_key_in_use", "a request with this Idempotency-Key is still running; retry later to get its answer"),
  idempotency_answer_unreadable_error: envelopeError(409, "idempotency_answer_unreadable",
    "the first answer to this Idempotency-Key was sealed under another HERALD_SECRETS_KEY and cannot be shown again; send the request with a new key")
}

const addIdempotencyKeys = (spec: Json) => {
  for (const [name, schema] of Object.entries(IDEMPOTENCY_ERRORS)) {
    const { "x-status": _, ...component } = schema
    spec.components.schemas[name] = component
  }
  for (const route of IDEMPOTENT) {
    const [method, path] = route.split(" ") as [string, string]
    const operation = spec.paths[path]?.[method.toLowerCase()] as Json | undefined
    if (operation === undefined) continue
    operation.parameters = [...(operation.parameters ?? []), {
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description: "1 to 255 visible ASCII characters (a UUID per logical write is a good key). A copy of this request (same method, path, " +
        "query and body) with the same key within 24 hours is not run again: it gets the first answer, with `Idempotent-Replayed: true`. " +
        "Kept: 2xx, 402, 403, 404, 409 and 422 answers; a 400, 408, 413, 415, 429 or 5xx is not, so the copy runs. Keys belong to the caller within the account (the person signed in, the API key, the secret key; the partner on " +
        "the e-mail API), and the route's role check runs before a replay.",
      schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
      example: "order-1001-shipped"
    }]
    for (const [name, { "x-status": status }] of Object.entries(IDEMPOTENCY_ERRORS)) {
      const ref = { $ref: `#/components/schemas/${name}` }
      const response = operation.responses[status] as Json | undefined
      const existing = response?.content?.["application/json"]?.schema as Json | undefined
      operation.responses[status] = {
        description: response?.description ?? ERROR_DESCRIPTIONS[name.replace(/_error$/, "")],
        content: { "application/json": { schema: existing === undefined ? ref : { anyOf: [...(existing.anyOf ?? [existing]), ref] } } }
      }
    }
  }
}

const WEBHOOK_HEADERS = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The delivery's id (`wd_<uuid>`, the envelope's delivery_id): the same on every attempt of the delivery. Deduplicate on it.",
    schema: { type: "string" },
    example: "wd_5a8c2e4f-1b3d-4f6a-8c9e-0b1d2f3a4c5e"
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "When this attempt was sent, in Unix seconds. Refuse requests too far from your clock (Standard Webhooks allows 5 minutes).",
    schema: { type: "string", pattern: "^[0-9]+$" },
    example: "1772446530"
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description: "`v1,<base64 HMAC-SHA256 of \"<webhook-id>.<webhook-timestamp>.<body>\">` under the endpoint's secret (`whsec_<base64>`, the part " +
      "after whsec_ decoded), one or more separated by spaces: for 24 hours after a secret rotation, one under the new secret and one under the " +
      "replaced one. Accept the request when any matches (the `standardwebhooks` package: `new Webhook(secret).verify(body, headers)`).",
    schema: { type: "string" },
    example: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
  }
]

const RECEIVERS: Record<WebhookEvent["receiver"], string> = {
  rcs: "RCS endpoints (POST /api/v1/rcs/webhooks)",
  whatsapp: "the developer webhook (PUT /api/v1/app/developer/webhook)",
  any: "the endpoint tested",
  partner: "partner e-mail event destinations"
}

const WEBHOOKS_TAG = "webhookEvents"

const webhookKey = (event: WebhookEvent) =>
  event.receiver === "rcs" && event.type.startsWith("message.") ? `${event.type} (RCS)` : event.receiver === "whatsapp" && event.type.startsWith("message.") ? `${event.type} (WhatsApp)` : event.type

const addWebhooks = (spec: Json) => {
  const webhooks: Json = {}
  for (const event of WEBHOOK_EVENTS) {
    const schema = OpenApiJsonSchema.makeWithDefs(event.body, { defs: spec.components.schemas })
    webhooks[webhookKey(event)] = {
      post: {
        tags: [WEBHOOKS_TAG],
        operationId: `webhook.${event.receiver}.${event.type}`,
        summary: event.summary,
        description: `${event.description}\n\nReceived by ${RECEIVERS[event.receiver]}: a POST with this JSON body and the Standard Webhooks headers.`,
        parameters: WEBHOOK_HEADERS,
        requestBody: { required: true, content: { "application/json": { schema, example: event.example } } },
        responses: {
          "2XX": { description: "Any 2xx acknowledges the delivery; the body is not read." },
          "4XX": { description: "A failure, as is any other status or no answer within 10 s: the attempt is retried 1 s, 5 s and 30 s after each failure, then the delivery becomes a dead letter (GET /api/v1/rcs/webhooks/dead-letter) that can be replayed." },
          "5XX": { description: "A failure, retried as a 4xx is." }
        },
        security: []
      }
    }
  }
  spec.webhooks = webhooks
  spec.tags.push({
    name: WEBHOOKS_TAG,
    description: "What Herald POSTs to webhook endpoints: the envelope `{event_id, type, occurred_at, delivery_id, account_id, data}` of each " +
      "event type, signed per Standard Webhooks (docs/webhooks.md). Delivery is at least once: deduplicate on delivery_id (the webhook-id header)."
  })
}

/**
 * What the edge answers before any handler runs (src/http/adapter/NodeAdapter.ts) to a request
 * with a body, whatever the operation: a body past 10 MB, one in another type than JSON, one that
 * stops arriving. Declared on every operation that takes a body (issue 34: 2 of 45 said so).
 */
const BODY_ERRORS: ReadonlyArray<readonly [status: string, component: string, code: string, example: string]> = [
  ["408", "request_timeout_error", "request_timeout", "the request body stopped arriving (1024 bytes in); nothing was done"],
  ["413", "payload_too_large_error", "payload_too_large", "request body exceeds 10485760 bytes"],
  ["415", "unsupported_media_type_error", "unsupported_media_type", "this route takes a JSON body (Content-Type: application/json), not text/plain"]
]

const refOf = (component: string) => `#/components/schemas/${component}`

/** Adds `component` (made by envelopeError when the document has none) to an operation's answers for `status`. */
const addError = (spec: Json, operation: Json, status: string, component: string, code: string, example: string) => {
  if (spec.components.schemas[component] === undefined) {
    const { "x-status": _, ...schema } = envelopeError(Number(status), code, example)
    spec.components.schemas[component] = schema
  }
  const response = operation.responses[status] as Json | undefined
  const existing = response?.content?.["application/json"]?.schema as Json | undefined
  const ref = { $ref: refOf(component) }
  if (existing !== undefined && JSON.stringify(existing.anyOf ?? [existing]).includes(`"${ref.$ref}"`)) return
  operation.responses[status] = {
    description: response?.description ?? ERROR_DESCRIPTIONS[code],
    content: { "application/json": { schema: existing === undefined ? ref : { anyOf: [...(existing.anyOf ?? [existing]), ref] } } }
  }
}

/**
 * What the edge answers to any request before its route runs: headers past Node's 16 KiB (431,
 * src/http/clientErrors.ts), and, on a path with parameters, 404 `not_found` when the router
 * cannot read a parameter (longer than 100 characters, or percent-encoding that is not UTF-8), as
 * for a path it does not know.
 */
const addEdgeErrors = (spec: Json) => {
  for (const [path, item] of Object.entries<Json>(spec.paths)) {
    for (const operation of Object.values<Json>(item)) {
      if (operation.requestBody !== undefined) {
        for (const [status, component, code, example] of BODY_ERRORS) addError(spec, operation, status, component, code, example)
      }
      addError(spec, operation, "431", "request_header_fields_too_large_error", "request_header_fields_too_large", "the request's headers are larger than 16 KiB")
      if (path.includes("{")) addError(spec, operation, "404", "not_found_error", "not_found", "no route for GET /api/v1/rcs/recipients/%ED%A0%80")
    }
  }
}

const RESULT_FALSE = {
  type: "boolean",
  enum: [false],
  description: "Always false on an error: Interakt's flag, kept beside success for its clients."
}

/**
 * Every error of the public messaging API (and of the conversions sent with the secret key)
 * carries Interakt's `result: false` beside `success` (the adapter adds it, src/http/resultFlag.ts;
 * not to a 431, answered before the request is read), which the shared error components
 * (additionalProperties false) do not allow: those operations' error responses point at copies of
 * them that declare it (`public_…`).
 */
const publicErrors = (spec: Json) => {
  const variantOf = (ref: string): string => {
    const name = ref.split("/").pop()!
    const variant = `public_${name}`
    if (spec.components.schemas[variant] === undefined) {
      const schema = structuredClone(spec.components.schemas[name]) as Json
      schema.properties = { result: RESULT_FALSE, ...schema.properties }
      schema.required = ["result", ...(schema.required ?? [])]
      if (Array.isArray(schema.examples)) schema.examples = schema.examples.map((example: Json) => ({ result: false, ...example }))
      spec.components.schemas[variant] = schema
    }
    return refOf(variant)
  }
  const rewrite = (schema: Json): Json =>
    typeof schema.$ref === "string"
      ? { ...schema, $ref: variantOf(schema.$ref) }
      : Array.isArray(schema.anyOf)
      ? { ...schema, anyOf: schema.anyOf.map(rewrite) }
      : schema
  for (const [path, item] of Object.entries<Json>(spec.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      if (!answersResult(method, path)) continue
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        const media = response.content?.["application/json"] as Json | undefined
        // A 431 is answered by Node's parser before the request line is read, so without it.
        if (!/^[45]/.test(status) || status === "431" || media?.schema === undefined) continue
        media.schema = rewrite(media.schema)
        if (media.example !== undefined && typeof media.example === "object") media.example = { result: false, ...media.example }
      }
    }
  }
  // Errors only the public API answers are left with no other reference.
  const text = JSON.stringify({ ...spec, components: { ...spec.components, schemas: {} } }) + JSON.stringify(spec.components.schemas)
  for (const name of Object.keys(spec.components.schemas)) {
    if (spec.components.schemas[`public_${name}`] !== undefined && !text.includes(`"${refOf(name)}"`)) delete spec.components.schemas[name]
  }
}

/** A path as the document writes it (`/a/:id` → `/a/{id}`). */
const documentPath = (path: string) => path.replace(/:(\w+)/g, "{$1}")

/** What a query field decodes to, without the `undefined` of an optional one. */
const decodedOf = (ast: SchemaAST.AST): SchemaAST.AST => {
  const members = SchemaAST.isUnion(ast) ? ast.types.filter((member) => !SchemaAST.isUndefinedKeyword(member)) : [ast]
  return SchemaAST.typeAST(members.length === 1 ? members[0]! : SchemaAST.Union.make(members))
}

const BOUNDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] as const

/**
 * A query value is text on the wire, so the generator writes the encoded side of `limit`
 * (NumberFromString) as a string; what a client sends is an integer, and generated clients need it
 * typed so (issue 34). A query parameter that decodes to an integer, a number or a boolean is
 * written as that type, with its bounds, keeping its description.
 */
const typedQueryParameters = (spec: Json) => {
  for (const group of Object.values((HeraldApi as unknown as HttpApi.HttpApi.AnyWithProps).groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      if (Option.isNone(endpoint.urlParamsSchema)) continue
      const operation = spec.paths[documentPath(endpoint.path)]?.[endpoint.method.toLowerCase()] as Json | undefined
      if (operation === undefined) continue
      for (const field of SchemaAST.getPropertySignatures(endpoint.urlParamsSchema.value.ast)) {
        const parameter = (operation.parameters as Array<Json> | undefined)?.find((p) => p.in === "query" && p.name === String(field.name))
        if (parameter === undefined || parameter.schema?.type !== "string") continue
        let decoded: Json
        try {
          decoded = JSONSchema.make(Schema.make(decodedOf(field.type))) as Json
        } catch {
          continue
        }
        if (!["integer", "number", "boolean"].includes(decoded.type)) continue
        const typed: Json = { type: decoded.type }
        for (const bound of BOUNDS) if (typeof decoded[bound] === "number") typed[bound] = decoded[bound]
        // An integer above 0 is one from 1.
        if (typed.type === "integer" && typed.exclusiveMinimum === 0) {
          delete typed.exclusiveMinimum
          typed.minimum = 1
        }
        if (parameter.schema.description !== undefined) typed.description = parameter.schema.description
        parameter.schema = typed
      }
    }
  }
}

/** Finishes the generated document (see the module's comment). */
export const finishDocument = (generated: Json): Json => {
  const spec = structuredClone(generated)
  describeSecuritySchemes(spec)
  typedQueryParameters(spec)
  addIdempotencyKeys(spec)
  addEdgeErrors(spec)
  dedupeCompositions(spec)
  publicErrors(spec)
  addWebhooks(spec)
  describeFields(spec)
  describeErrorResponses(spec)
  return spec
}

/** HeraldApi as documented: the same declarations, the generated document finished by finishDocument. */
export const DocumentedApi = HeraldApi.annotate(OpenApi.Transform, finishDocument)

/** The OpenAPI document of the whole API (OpenApi.fromApi caches it per API). */
export const openApiDocument = (): OpenApi.OpenAPISpec => OpenApi.fromApi(DocumentedApi)
