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
    success: Schema.Literal(false),
    code: Schema.Literal(code),
    ...extra
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
    description: `${status} ${code}`
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
    success: Schema.Literal(false),
    code: Schema.Literal("invalid_request"),
    message: Schema.String,
    errors: Schema.Array(FieldIssue)
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
).annotations({ ...HttpApiSchema.annotations({ status: 400 }), identifier: "invalid_request_error" }) as any

/** An envelope built outside HttpApi (router-level 404, 413, bad JSON, 503, 500). */
export const envelope = (status: number, code: string, message: string, extra?: Record<string, unknown>) =>
  HttpServerResponse.unsafeJson({ success: false, code, message, ...extra }, { status })
