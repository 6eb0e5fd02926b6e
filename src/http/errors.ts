import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Schema } from "effect"
import { Conflict, FieldIssue, InvalidRequest, NotFound, ServiceUnavailable } from "../domain/errors.ts"
import { sentenceOf } from "../domain/plainIssues.ts"

/** Status, code and body fields of each domain error, by tag, for routes answered outside HttpApi. */
const wireOf = new Map<string, { readonly status: number; readonly code: string; readonly keys: ReadonlyArray<string> }>()

/** The REST `code` of a domain error registered with `errorResponse` (GraphQL reports it as `reason`). */
export const restCodeOf = (tag: string): string | undefined => wireOf.get(tag)?.code

/** The envelope of a domain error registered with `errorResponse`; undefined for anything else. */
export const errorEnvelope = (error: { readonly _tag: string }) => {
  const wire = wireOf.get(error._tag)
  if (wire === undefined) return undefined
  const fields = Object.fromEntries(wire.keys.map((key) => [key, (error as unknown as Record<string, unknown>)[key]]))
  return HttpServerResponse.unsafeJson({ success: false, code: wire.code, ...fields }, { status: wire.status })
}

/**
 * What each error `code` means, for the OpenAPI document: the error schema's description, which
 * is also its response's (src/http/openApiDocument.ts lists every code a status may carry).
 */
export const ERROR_DESCRIPTIONS: Readonly<Record<string, string>> = {
  invalid_request: "The body, a path parameter or a query value is not valid: `errors` lists every problem, each with the field's path and what it must be.",
  service_unavailable: "A dependency (Postgres, NATS, an actor, or Meta when a WhatsApp template is submitted) did not answer in time. Try again shortly. Nothing was done, unless the message says the request may still complete (a partner e-mail send, or a command NATS did not answer through a leader election): retry with the same Idempotency-Key. The Retry-After header says when to try again.",
  invalid_credentials: "The e-mail or password is wrong.",
  invalid_code: "The two-factor code (TOTP or a recovery code) is wrong, used, or missing where one is needed.",
  too_many_attempts: "Too many failed sign-in attempts for this e-mail: wait retry_after_seconds.",
  csrf_failed: "The console refused a request that changes something: it lacked the session's CSRF token (x-csrf-token), or came from another origin.",
  unauthorized: "No valid user token: the Authorization header is missing, another scheme, expired, altered or revoked (`detail` says which).",
  invalid_api_key: "The key is not valid: unknown, revoked, expired, or not the kind this API takes (`detail` says which).",
  api_key_endpoint_not_allowed: "An API key cannot call this operation: it needs a signed-in user's token.",
  missing_scope: "The API key lacks the scope this operation needs.",
  rate_limited: "Too many requests for the plan's rate: wait retry_after_sec (also in the Retry-After header).",
  forbidden: "The caller's role (or, for some operations, a session rather than an API key) does not allow this.",
  not_found: "No such resource, or not one the caller can see (another account's reads alike, so ids cannot be probed).",
  conflict: "It conflicts with what exists (a name taken, a state that does not allow it): `key` names what.",
  bot_not_in_scope: "The caller is limited to some bots (assigned_bots) and this bot is not one of them.",
  template_invalid: "The template breaks the channel's rules: `errors` (strings, the contract's) and `issues` (`{path, message}`) list every problem; `warnings` what would pass but may be a mistake.",
  no_active_bot: "The account has no active bot yet: templates need one.",
  bot_not_active: "bot_id is not an active bot of the account: malformed, unknown, another account's, pending approval or suspended (the message says which).",
  gateway_quota: "The RCS gateway's quota refused the send: retry later (retryable).",
  insufficient_balance: "The wallet cannot pay for it: `balance` and `price` say by how much; nothing was sent.",
  send_rejected: "The gateway refused the message (its content, media, the recipient or the bot's configuration): the Gateway error record says why.",
  gateway_error: "The gateway failed, after Herald's automatic retries, or answered something unknown.",
  send_unconfirmed: "The gateway did not confirm the send in time: message_id is given and the message is never resent; its status arrives later (message.* events).",
  bot_not_promotional: "Broadcasts need a bot whose use case is promotional: `use_instead` says what this bot can do.",
  feature_locked: "The account's plan does not include this (Starter has no API access; AI agents need Advanced or Enterprise).",
  no_wa_number: "The account has no WhatsApp number: nothing to send from, and no WhatsApp Business Account to submit templates to.",
  outside_service_window: "A free-form message needs the customer to have written in the last 24 hours: send an approved template instead.",
  recipient_opted_out: "The customer opted out of marketing (an opt-out keyword such as STOP): MARKETING templates wait until they send START.",
  capi_not_configured: "The account has no Conversions API dataset yet (PUT /api/v1/app/meta-ads/capi/config).",
  template_not_usable: "No APPROVED template of that name and language.",
  agent_not_found: "No team member with that e-mail, and no AI agent with that id (ai:<id>).",
  conversation_not_found: "The customer has no open conversation (on that number).",
  invalid_cursor: "The cursor was edited, or given out for another list, filter or partner: start again without it.",
  quota_exceeded: "The send would cross the partner's 24-hour quota: refused whole.",
  upload_interrupted: "The upload broke off before its end (the connection closed): nothing was imported.",
  request_timeout: "The body stopped arriving (or took too long): nothing was written.",
  payload_too_large: "The body is larger than the operation takes: nothing was written.",
  unsupported_media_type: "The body's Content-Type is not one the operation takes.",
  request_header_fields_too_large: "The request's headers (the URL included) are larger than 16 KiB: nothing was read. The connection is closed.",
  idempotency_key_reused: "This Idempotency-Key was used with a different request in the last 24 hours: nothing ran. Use a new key for a new request.",
  idempotency_key_in_use: "The first request with this Idempotency-Key is still running (or did not finish): retry after Retry-After seconds to get its answer.",
  idempotency_answer_unreadable: "The first answer to this Idempotency-Key was sealed under a HERALD_SECRETS_KEY this server no longer has: send the request with a new key."
}

/** Fields errors add to the envelope, by name (the domain error classes declare them). */
const ERROR_FIELDS: Readonly<Record<string, string>> = {
  message: "What went wrong, as sentences for a person.",
  errors: "Every problem found.",
  detail: "More about what went wrong.",
  retry_after_seconds: "Seconds to wait before the next attempt.",
  retry_after_sec: "Seconds to wait before the next request (as the Retry-After header).",
  key: "What the conflict is about (the field or the state).",
  warnings: "What passes but may be a mistake.",
  issues: "The errors again, as {path, message}, the shape of every other validation error.",
  category: "What kind of problem: content, media, recipient, config, quota, gateway or unknown.",
  retryable: "Whether sending the same message again later may succeed.",
  message_id: "The message the error is about, when one was created.",
  balance: "The wallet's balance now.",
  price: "What the request would cost.",
  bot_use_case: "The bot's use case.",
  use_instead: "What the bot can do instead.",
  checks: "Each dependency's state.",
  allowed_methods: "The methods the path takes."
}

const FAILED = "Always false on an error."
const CODE = "The error's code: stable, for programs (message is for people)."

const describedField = (name: string, field: Schema.Struct.Field): Schema.Struct.Field => {
  const description = ERROR_FIELDS[name]
  return description === undefined ? field : (field as any).annotations({ description })
}

/**
 * Every non-2xx JSON body is `{success:false, code, message, ...extra}` (DESIGN.md, Errors).
 * Domain errors are `Schema.TaggedError`s; `errorResponse` turns one into its wire envelope with a
 * fixed status and code, so HttpApi encodes it and the OpenAPI document shows the real shape.
 */
export const errorResponse = <Self extends { readonly _tag: string }, Fields extends Schema.Struct.Fields>(
  errorClass: Schema.Schema<Self, any, never> & { readonly fields: Fields },
  status: number,
  code: string
): Schema.Schema<Self, unknown, never> => {
  const { _tag, ...extra } = errorClass.fields as Schema.Struct.Fields
  const keys = Object.keys(extra)
  wireOf.set((errorClass as unknown as { readonly _tag: string })._tag, { status, code, keys })
  const wire = Schema.Struct({
    success: Schema.Literal(false).annotations({ description: FAILED }),
    code: Schema.Literal(code).annotations({ description: CODE }),
    ...Object.fromEntries(keys.map((key) => [key, describedField(key, extra[key]!)]))
  })
  return Schema.transform(wire, Schema.typeSchema(errorClass), {
    strict: false,
    decode: ({ success: _s, code: _c, ...fields }) => new (errorClass as any)(fields),
    // Fields are read by name: `message` of an Error subclass is not an own enumerable property.
    encode: (error) => ({
      success: false as const,
      code,
      ...Object.fromEntries(keys.map((key) => [key, (error as Record<string, unknown>)[key]]))
    })
  }).annotations({
    ...HttpApiSchema.annotations({ status }),
    identifier: `${code}_error`,
    description: ERROR_DESCRIPTIONS[code] ?? `${status} ${code}`
  }) as any
}

export const InvalidRequestResponse = errorResponse(InvalidRequest, 400, "invalid_request")
export const NotFoundResponse = errorResponse(NotFound, 404, "not_found")
export const ConflictResponse = errorResponse(Conflict, 409, "conflict")
export const ServiceUnavailableResponse = errorResponse(ServiceUnavailable, 503, "service_unavailable")

/**
 * HttpApi's own decode failure, re-shaped into the `invalid_request` envelope with one
 * `{path, message}` per problem. It replaces HttpApi's default API-level error schema.
 */
export const DecodeErrorResponse: Schema.Schema<HttpApiDecodeError, unknown> = Schema.transform(
  Schema.Struct({
    success: Schema.Literal(false).annotations({ description: FAILED }),
    code: Schema.Literal("invalid_request").annotations({ description: CODE }),
    message: Schema.String.annotations({ description: ERROR_FIELDS.message }),
    errors: Schema.Array(FieldIssue).annotations({ description: ERROR_FIELDS.errors })
  }),
  Schema.typeSchema(HttpApiDecodeError),
  {
    strict: false,
    decode: ({ message, errors }) =>
      new HttpApiDecodeError({ message, issues: errors.map((e) => ({ _tag: "Type" as const, path: e.path.split("."), message: e.message })) }),
    encode: (error) => {
      const errors = error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }))
      return {
        success: false as const,
        code: "invalid_request" as const,
        message: errors.length > 0 ? errors.map(sentenceOf).join("; ") : error.message,
        errors
      }
    }
  }
).annotations({ ...HttpApiSchema.annotations({ status: 400 }), identifier: "invalid_request_error", description: ERROR_DESCRIPTIONS.invalid_request }) as any

/** An envelope built outside HttpApi (router-level 404, 413, bad JSON, 503, 500). */
export const envelope = (status: number, code: string, message: string, extra?: Record<string, unknown>) =>
  HttpServerResponse.unsafeJson({ success: false, code, message, ...extra }, { status })
