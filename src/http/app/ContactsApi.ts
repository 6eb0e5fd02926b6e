import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CUSTOMERS_LIMIT_MAX } from "../../customers/Customers.ts"
import { SEGMENTS_LIMIT_MAX } from "../../segments/Segments.ts"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { TraitFilter } from "../public/PublicApi.ts"
import { ImportReportFields, ImportTooLargeResponse, UnsupportedMediaTypeResponse, UploadInterruptedResponse, UploadStalledResponse } from "../rcs/ContactListsApi.ts"
import { AppAuthentication } from "./AppAuthentication.ts"

const Contact = Schema.Struct({
  id: Schema.String,
  phone: Schema.String.annotations({ description: "E.164, with its '+'" }),
  name: Schema.NullOr(Schema.String),
  user_id: Schema.NullOr(Schema.String),
  traits: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  tags: Schema.Array(Schema.String),
  created_at: Schema.String,
  last_seen_at: Schema.NullOr(Schema.String)
})

const Traits = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ description: "merged into the contact's traits; a null value removes the trait" })

const limitParam = (max: number) => Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, max)))

const IdPath = Schema.Struct({ id: Schema.String })
const ContactAnswer = Schema.Struct({ success: Schema.Literal(true), contact: Contact })
const ContactPage = Schema.Struct({ success: Schema.Literal(true), contacts: Schema.Array(Contact), next_cursor: Schema.String.annotations({ description: "empty on the last page" }) })
const Deleted = Schema.Struct({ success: Schema.Literal(true) })

/** /api/v1/app/contacts: the account's customers (docs/app-api.md). */
export class ContactsApi extends HttpApiGroup.make("appContacts")
  .add(
    HttpApiEndpoint.get("listContacts", "/contacts")
      .setUrlParams(Schema.Struct({
        search: Schema.optional(Schema.String).annotations({ description: "part of the name (any case) or of the phone's digits" }),
        tag: Schema.optional(Schema.String).annotations({ description: "only contacts with this tag" }),
        segment_id: Schema.optional(Schema.String).annotations({ description: "only the segment's members" }),
        limit: limitParam(CUSTOMERS_LIMIT_MAX),
        cursor: Schema.optional(Schema.String)
      }))
      .addSuccess(ContactPage)
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .annotate(OpenApi.Summary, "List contacts, newest first (search, tag, segment)")
  )
  .add(
    HttpApiEndpoint.post("createContact", "/contacts")
      .setPayload(Schema.Struct({
        phone: Schema.String.annotations({ description: "E.164 with the country code, '+' optional" }),
        name: Schema.optional(Schema.String),
        user_id: Schema.optional(Schema.String).annotations({ description: "your id of the customer" }),
        traits: Schema.optional(Traits),
        tags: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "added to the contact's tags" })
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        created: Schema.Boolean.annotations({ description: "false when the phone was already a contact (it was updated)" }),
        contact: Contact
      }))
      .addError(InvalidRequestResponse)
      .annotate(OpenApi.Summary, "Create a contact, or update the one with this phone")
  )
  .add(HttpApiEndpoint.get("getContact", "/contacts/:id").setPath(IdPath).addSuccess(ContactAnswer).addError(NotFoundResponse))
  .add(
    HttpApiEndpoint.patch("updateContact", "/contacts/:id")
      .setPath(IdPath)
      .setPayload(Schema.Struct({
        name: Schema.optional(Schema.NullOr(Schema.String)).annotations({ description: "null clears it" }),
        user_id: Schema.optional(Schema.NullOr(Schema.String)).annotations({ description: "null clears it" }),
        traits: Schema.optional(Traits),
        tags: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "the contact's tags from now on (replaces them)" })
      }))
      .addSuccess(ContactAnswer)
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .annotate(OpenApi.Summary, "Change a contact")
  )
  .add(
    HttpApiEndpoint.del("deleteContact", "/contacts/:id")
      .setPath(IdPath)
      .addSuccess(Deleted)
      .addError(NotFoundResponse)
      .annotate(OpenApi.Summary, "Delete a contact with their conversations")
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app") {}

/**
 * POST /api/v1/app/contacts/import, served off HttpApi (src/http/app/CustomerImportRoute.ts, a
 * streamed body); declared here for the OpenAPI document and the authorization matrix.
 */
export class CustomerImportApi extends HttpApiGroup.make("appContactImport")
  .add(
    HttpApiEndpoint.post("importContacts", "/contacts/import")
      .setPayload(Schema.Union(
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })),
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "application/x-ndjson" }))
      ))
      .addSuccess(Schema.Struct({
        ...ImportReportFields,
        updated: Schema.Int.annotations({ description: "rows whose phone was already a contact" }),
        duplicates: Schema.Int.annotations({ description: "rows repeating a phone of an earlier row of the file" })
      }))
      .addError(InvalidRequestResponse)
      .addError(UnsupportedMediaTypeResponse)
      .addError(ImportTooLargeResponse)
      .addError(UploadInterruptedResponse)
      .addError(UploadStalledResponse)
      .annotate(OpenApi.Summary, "Import contacts from CSV (phone, name, traits) or NDJSON, streamed")
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app") {}

const Segment = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  filters: Schema.Array(Schema.Unknown).annotations({ description: "the public search's [{trait, op, value}], combined with AND" }),
  tags: Schema.Array(Schema.String).annotations({ description: "every tag must be present" }),
  customer_count: Schema.Int.annotations({ description: "customers matching now" }),
  created_at: Schema.String,
  updated_at: Schema.String
})
const SegmentAnswer = Schema.Struct({ success: Schema.Literal(true), segment: Segment })
const SegmentFields = {
  filters: Schema.optional(Schema.Array(TraitFilter)),
  tags: Schema.optional(Schema.Array(Schema.String))
}

/** /api/v1/app/segments: saved customer searches with a live count (docs/app-api.md). */
export class SegmentsApi extends HttpApiGroup.make("appSegments")
  .add(
    HttpApiEndpoint.get("listSegments", "/segments")
      .setUrlParams(Schema.Struct({ limit: limitParam(SEGMENTS_LIMIT_MAX), cursor: Schema.optional(Schema.String) }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), segments: Schema.Array(Segment), next_cursor: Schema.String }))
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.post("createSegment", "/segments")
      .setPayload(Schema.Struct({ name: Schema.String, ...SegmentFields }))
      .addSuccess(SegmentAnswer)
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
      .annotate(OpenApi.Summary, "Save a customer search as a segment")
  )
  .add(HttpApiEndpoint.get("getSegment", "/segments/:id").setPath(IdPath).addSuccess(SegmentAnswer).addError(NotFoundResponse))
  .add(
    HttpApiEndpoint.patch("updateSegment", "/segments/:id")
      .setPath(IdPath)
      .setPayload(Schema.Struct({ name: Schema.optional(Schema.String), ...SegmentFields }))
      .addSuccess(SegmentAnswer)
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
  )
  .add(HttpApiEndpoint.del("deleteSegment", "/segments/:id").setPath(IdPath).addSuccess(Deleted).addError(NotFoundResponse))
  .add(
    HttpApiEndpoint.get("segmentContacts", "/segments/:id/contacts")
      .setPath(IdPath)
      .setUrlParams(Schema.Struct({ limit: limitParam(CUSTOMERS_LIMIT_MAX), cursor: Schema.optional(Schema.String) }))
      .addSuccess(ContactPage)
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .annotate(OpenApi.Summary, "The segment's contacts now, newest first")
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app") {}
