import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ImportTooLarge, UnsupportedMediaType, UploadInterrupted, UploadStalled } from "../../contacts/errors.ts"
import { IMPORT_MAX_BYTES, INVALID_REPORTED_MAX } from "../../contacts/importLimits.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"

export const UnsupportedMediaTypeResponse = errorResponse(UnsupportedMediaType, 415, "unsupported_media_type")
export const ImportTooLargeResponse = errorResponse(ImportTooLarge, 413, "payload_too_large")
export const UploadInterruptedResponse = errorResponse(UploadInterrupted, 400, "upload_interrupted")
export const UploadStalledResponse = errorResponse(UploadStalled, 408, "request_timeout")

/** An import's report (src/contacts/importTally.ts): every data row added, a duplicate or invalid. */
export const ImportReportFields = {
  success: Schema.Literal(true),
  added: Schema.Int,
  duplicates: Schema.Int,
  invalid: Schema.Array(Schema.Struct({ row: Schema.Int, phone: Schema.String, reason: Schema.String }))
    .annotations({ description: `the first ${INVALID_REPORTED_MAX} invalid rows; row is the 1-based data row` }),
  invalid_count: Schema.Int
}

const ContactList = Schema.Struct({
  list_id: Schema.String,
  name: Schema.String,
  contact_count: Schema.Int,
  created_at: Schema.String
})

const Contact = Schema.Struct({
  contact_id: Schema.String,
  // E.164.
  phone: Schema.String,
  name: Schema.NullOr(Schema.String),
  params: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  created_at: Schema.String
})

const ListPath = Schema.Struct({ list_id: Schema.String })

const PageParams = Schema.Struct({
  // Above the maximum (1000) is served as the maximum.
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive())),
  cursor: Schema.optional(Schema.String)
})

const ListAnswer = Schema.Struct({ success: Schema.Literal(true), list: ContactList })

/** Contact lists (DESIGN.md, Contact lists; docs/contact-lists.md), served by HttpApi. */
export class ContactListsApi extends HttpApiGroup.make("contactLists")
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(Schema.Struct({ name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(100)) }))
      .addSuccess(ListAnswer)
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .addError(ConflictResponse)
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .setUrlParams(PageParams)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        lists: Schema.Array(ContactList),
        count: Schema.Int,
        // Absent on the last page.
        next_cursor: Schema.optional(Schema.String)
      }))
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.get("get", "/:list_id")
      .setPath(ListPath)
      .addSuccess(ListAnswer)
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.del("remove", "/:list_id")
      .setPath(ListPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
  )
  .add(
    HttpApiEndpoint.get("contacts", "/:list_id/contacts")
      .setPath(ListPath)
      .setUrlParams(PageParams)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        contacts: Schema.Array(Contact),
        count: Schema.Int,
        // Absent on the last page.
        next_cursor: Schema.optional(Schema.String)
      }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/contact-lists") {}

const ContactInput = Schema.Struct({
  phone: Schema.String,
  name: Schema.optional(Schema.String),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

/**
 * POST /api/v1/rcs/contact-lists/{list_id}/contacts: declared here for the OpenAPI document and
 * the authorization matrix, served off the router (ContactImportRoute) because its body is
 * streamed, up to IMPORT_MAX_BYTES instead of the 10 MB every other route takes.
 */
export class ContactImportApi extends HttpApiGroup.make("contactImport")
  .add(
    HttpApiEndpoint.post("import", "/:list_id/contacts")
      .setPath(ListPath)
      .setPayload(Schema.Union(
        Schema.Struct({ contacts: Schema.Array(ContactInput) }),
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "application/x-ndjson" })),
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" }))
      ))
      .addSuccess(Schema.Struct(ImportReportFields))
      .addError(InvalidRequestResponse)
      .addError(UploadInterruptedResponse)
      .addError(UploadStalledResponse)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .addError(ImportTooLargeResponse)
      .addError(UnsupportedMediaTypeResponse)
      .annotate(
        OpenApi.Description,
        `Imports contacts as JSON {contacts:[…]}, NDJSON (one contact a line) or CSV with a header row (phone required, ` +
          `name optional, other columns become params). Streamed: up to ${IMPORT_MAX_BYTES} bytes. Phones are normalised ` +
          `to E.164; duplicates within the list and invalid rows are counted, the first ${INVALID_REPORTED_MAX} invalid ` +
          `rows listed. All or nothing: a body that breaks leaves nothing written.`
      )
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/contact-lists") {}
