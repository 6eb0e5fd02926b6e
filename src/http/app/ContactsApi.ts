import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CUSTOMERS_LIMIT_DEFAULT, CUSTOMERS_LIMIT_MAX } from "../../customers/Customers.ts"
import { SEGMENTS_LIMIT_DEFAULT, SEGMENTS_LIMIT_MAX } from "../../segments/Segments.ts"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { TraitFilter } from "../public/PublicApi.ts"
import { ImportReportFields, ImportTooLargeResponse, UnsupportedMediaTypeResponse, UploadInterruptedResponse, UploadStalledResponse } from "../rcs/ContactListsApi.ts"
import { AppAuthentication } from "./AppAuthentication.ts"

/** The paging of the app API's lists (docs/app-api.md): newest first, by cursor. */
export const limitParam = (max: number, byDefault: number) =>
  Schema.optional(Schema.NumberFromString.pipe(
    Schema.int(),
    Schema.between(1, max),
    describe(`Rows on the page, 1 to ${max.toLocaleString("en")}; ${byDefault} by default.`)
  ))
export const CursorParam = Schema.optional(
  Schema.String.annotations({ description: "The next_cursor of the previous page, passed back as it is; absent (or empty) for the first page. Another value is 400." })
)
export const NextCursor = Schema.String.annotations({ description: "Pass it as cursor to read the next page; empty on the last page." })

const Contact = Schema.Struct({
  id: Schema.String.annotations({ description: "The contact's id." }),
  phone: Schema.String.annotations({ description: "The contact's phone number, E.164 with its '+': their identity (one contact per phone)." }),
  name: Schema.NullOr(Schema.String).annotations({ description: "The contact's name; null when none is known." }),
  user_id: Schema.NullOr(Schema.String).annotations({ description: "Your id of the customer; null when none was given." }),
  traits: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "What you know about the customer, by trait name: any JSON values (dates as ISO 8601 strings compare as dates in segments)."
  }),
  tags: Schema.Array(Schema.String).annotations({ description: "The contact's tags." }),
  created_at: Schema.String.annotations({ description: "When the contact was created (ISO 8601, UTC): the order of the lists." }),
  last_seen_at: Schema.NullOr(Schema.String).annotations({
    description: "When the customer last wrote to one of the account's WhatsApp numbers (ISO 8601, UTC); null if never."
  })
}).annotations({ description: "A contact: one of the account's customers, in the shape every surface answers them (docs/customers.md)." })

const Traits = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  description: "Traits to merge into the contact's, by name (1 to 100 characters): a value sets the trait, null removes it. A contact holds at most 200 traits " +
    "and 32 KiB of them as JSON."
})

const ContactPath = Schema.Struct({ id: Schema.String.annotations({ description: "The contact's id." }) })
const ContactAnswer = Schema.Struct({ success: Schema.Literal(true), contact: Contact })
const ContactPage = Schema.Struct({
  success: Schema.Literal(true),
  contacts: Schema.Array(Contact).annotations({ description: "The contacts on this page, newest first." }),
  next_cursor: NextCursor
})
const Deleted = Schema.Struct({ success: Schema.Literal(true) })

const CONTACT = {
  id: "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d",
  phone: "+919812345678",
  name: "Asha Rao",
  user_id: "cust-1042",
  traits: { city: "Pune", plan: "gold", orders: 12, signup: "2025-03-14" },
  tags: ["customer", "newsletter"],
  created_at: "2026-03-01T09:30:00.000Z",
  last_seen_at: "2026-03-02T08:12:45.000Z"
}
const OTHER_CONTACT = {
  id: "9c8d7e6f-5a4b-4c3d-8e2f-1a0b9c8d7e6f",
  phone: "+919876543210",
  name: "Ravi Kumar",
  user_id: null,
  traits: { city: "Pune", plan: "gold" },
  tags: ["customer"],
  created_at: "2026-02-27T16:05:12.345Z",
  last_seen_at: null
}

/** A contact's fields as POST /contacts takes them: also one row of an import (an NDJSON line, an item of a JSON body's contacts). */
const ContactBody = Schema.Struct({
  phone: Schema.optional(Schema.String).annotations({
    description: "The customer's phone with its country code (E.164; the '+' optional, spaces and dashes allowed): the contact's identity. " +
      "Required; `fullPhoneNumber` (the public API's name) is taken for it too."
  }),
  fullPhoneNumber: Schema.optional(Schema.String).annotations({ description: "The public API's name of `phone`: give one of the two (both only if they are the same number)." }),
  name: Schema.optional(Schema.String).annotations({ description: "The contact's name, 1 to 256 characters after trimming: replaces the one they have." }),
  user_id: Schema.optional(Schema.String).annotations({ description: "Your id of the customer, 1 to 256 characters: replaces the one they have." }),
  userId: Schema.optional(Schema.String).annotations({ description: "The public API's name of `user_id`: give one of the two (both only if they are equal)." }),
  traits: Schema.optional(Traits),
  tags: Schema.optional(Schema.Array(Schema.String)).annotations({
    description: "Tags to add to the contact's (each 1 to 64 characters; a contact holds at most 100)."
  })
})

/** /api/v1/app/contacts: the account's customers (docs/app-api.md). */
export class ContactsApi extends HttpApiGroup.make("appContacts")
  .add(
    HttpApiEndpoint.get("listContacts", "/contacts")
      .setUrlParams(Schema.Struct({
        search: Schema.optional(Schema.String).annotations({
          description: "Part of the contact's name (any case) or, with 3 digits or more, of their phone; at most 200 characters."
        }),
        tag: Schema.optional(Schema.String).annotations({ description: "Only the contacts with this tag (1 to 64 characters)." }),
        segment_id: Schema.optional(Schema.String).annotations({
          description: "Only the contacts the segment matches now (404 when the account has no such segment)."
        }),
        limit: limitParam(CUSTOMERS_LIMIT_MAX, CUSTOMERS_LIMIT_DEFAULT),
        cursor: CursorParam
      }))
      .addSuccess(ContactPage)
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "List the contacts",
        description: "The account's contacts, newest first, by cursor. `search`, `tag` and `segment_id` narrow the list together (one query in Postgres). " +
          "A secret key, on Growth and up.",
        response: {
          success: true,
          contacts: [CONTACT, OTHER_CONTACT],
          next_cursor: "WyIyMDI2LTAyLTI3VDE2OjA1OjEyLjM0NTAwMFoiLCI5YzhkN2U2Zi01YTRiLTRjM2QtOGUyZi0xYTBiOWM4ZDdlNmYiXQ.q7Lw2c9V0bX1mRkT4sNaEg"
        },
        returns: "A page of contacts."
      }))
  )
  .add(
    HttpApiEndpoint.post("createContact", "/contacts")
      .setPayload(ContactBody)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        created: Schema.Boolean.annotations({
          description: "True when the phone was new and the contact was created; false when it was already a contact, now updated."
        }),
        contact: Contact
      }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Create a contact, or update the one with this phone",
        description: "Idempotent by phone. A new phone creates a contact (`created: true`); a known one is updated as POST /api/v1/public/track/users " +
          "would: `name` and `user_id` replaced when given, traits merged (a null trait removed), tags added (`created: false`). Bad input is 400 " +
          "naming every problem, and nothing is written. A secret key, on Growth and up.",
        request: { phone: "+91 98123 45678", name: "Asha Rao", user_id: "cust-1042", traits: { city: "Pune", plan: "gold", coupon: null }, tags: ["newsletter"] },
        response: { success: true, created: false, contact: CONTACT },
        returns: "The contact as it is now."
      }))
  )
  .add(
    HttpApiEndpoint.get("getContact", "/contacts/:id")
      .setPath(ContactPath)
      .addSuccess(ContactAnswer)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read a contact",
        description: "One contact. Another account's id, or one that is not an id, is 404. A secret key, on Growth and up.",
        response: { success: true, contact: CONTACT },
        returns: "The contact."
      }))
  )
  .add(
    HttpApiEndpoint.patch("updateContact", "/contacts/:id")
      .setPath(ContactPath)
      .setPayload(Schema.Struct({
        name: Schema.optional(Schema.NullOr(Schema.String)).annotations({ description: "A new name, 1 to 256 characters after trimming; null clears it." }),
        user_id: Schema.optional(Schema.NullOr(Schema.String)).annotations({ description: "Your new id of the customer, 1 to 256 characters; null clears it." }),
        userId: Schema.optional(Schema.NullOr(Schema.String)).annotations({ description: "The public API's name of `user_id`: give one of the two (both only if they are equal)." }),
        traits: Schema.optional(Traits),
        tags: Schema.optional(Schema.Array(Schema.String)).annotations({
          description: "The contact's tags from now on: they replace the ones the contact has (each 1 to 64 characters, at most 100)."
        })
      }))
      .addSuccess(ContactAnswer)
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Change a contact",
        description: "Only the fields given change: `name` and `user_id` are set (null clears them), traits merged (null removes one), and `tags` " +
          "replaces the contact's tags. The phone is the contact's identity and cannot change. A secret key, on Growth and up.",
        request: { name: "Asha R.", traits: { plan: "platinum", coupon: null }, tags: ["customer", "vip"] },
        response: { success: true, contact: { ...CONTACT, name: "Asha R.", traits: { ...CONTACT.traits, plan: "platinum" }, tags: ["customer", "vip"] } },
        returns: "The contact as it is now."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteContact", "/contacts/:id")
      .setPath(ContactPath)
      .addSuccess(Deleted)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Delete a contact with their conversations",
        description: "Erases the contact with their conversations (inbound messages, calls and payment records); messages sent to them stay in the " +
          "message log. A secret key, on Growth and up.",
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app")
  .annotate(OpenApi.Description, "The account's contacts: its customers (one per phone) as the app API shows them, with traits and tags (docs/app-api.md).") {}

/**
 * POST /api/v1/app/contacts/import, served off HttpApi (src/http/app/CustomerImportRoute.ts, a
 * streamed body); declared here for the OpenAPI document and the authorization matrix.
 */
export class CustomerImportApi extends HttpApiGroup.make("appContactImport")
  .add(
    HttpApiEndpoint.post("importContacts", "/contacts/import")
      .setPayload(Schema.Union(
        Schema.Struct({ contacts: Schema.Array(ContactBody).annotations({ description: "The contacts, in order: each a POST /api/v1/app/contacts body." }) }),
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })),
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "application/x-ndjson" }))
      ))
      .addSuccess(Schema.Struct({
        ...ImportReportFields,
        added: Schema.Int.annotations({ description: "Rows whose phone was new to the account: a contact was created." }),
        updated: Schema.Int.annotations({
          description: "Rows whose phone was already a contact: its name and user id replaced when given, traits merged, tags added."
        }),
        duplicates: Schema.Int.annotations({ description: "Rows repeating a phone of an earlier row of the file (the row still applies, in file order)." })
      }))
      .addError(InvalidRequestResponse)
      .addError(UnsupportedMediaTypeResponse)
      .addError(ImportTooLargeResponse)
      .addError(UploadInterruptedResponse)
      .addError(UploadStalledResponse)
      .annotateContext(documented({
        summary: "Import contacts from CSV or NDJSON, streamed",
        description: "Creates or updates contacts by phone from a streamed body of up to 512 MiB (about ten million rows), as POST /api/v1/app/contacts " +
          "does for each row.\n\n" +
          "- `text/csv`: a header row with `phone` (required) and `name`, matched without regard to case; every other column is a trait whose cell is " +
          "typed: a plain number (`5`, `-2.5`; no leading zero, `+`, exponent or separator, at most 15 digits) a number, `true`/`false` (any case) a " +
          "boolean, an ISO 8601 date or date-time its text (compared as an instant by filters), anything else the cell's text. A header ending in " +
          "`:text` (`zip:text`, the trait `zip`) keeps its cells as written. An empty cell sets nothing.\n" +
          "- `application/x-ndjson`: one POST /api/v1/app/contacts body a line, traits keeping their JSON types; an unknown field makes the line invalid.\n" +
          "- `application/json`: `{contacts: [...]}`, each a POST /api/v1/app/contacts body (read as it streams, like the others).\n\n" +
          "The import is one transaction: a body that cannot be read (broken JSON, no `phone` column) is 400 naming where, a body cut short leaves " +
          "nothing written, and an import whose rows are mostly invalid stops with a 400. A secret key, on Growth and up; the key and the plan's " +
          "rate are checked before the body is read.",
        request: { contacts: [{ phone: "+919812345678", name: "Asha Rao", traits: { city: "Pune", orders: 12 }, tags: ["customer"] }, { phone: "+919845012345" }] },
        requestBodies: {
          "text/csv": "phone,name,city,plan,orders,zip:text\n+919812345678,Asha Rao,Pune,gold,12,411001\n+919845012345,Meera Shah,Mumbai,,,\n12,Nobody,Mumbai,silver,,\n",
          "application/x-ndjson": "{\"phone\":\"+919812345678\",\"name\":\"Asha Rao\",\"traits\":{\"city\":\"Pune\",\"orders\":12},\"tags\":[\"customer\"]}\n" +
            "{\"phone\":\"+919845012345\",\"name\":\"Meera Shah\",\"traits\":{\"coupon\":null}}\n" +
            "{\"phone\":\"12\"}\n"
        },
        response: {
          success: true,
          added: 1,
          updated: 1,
          duplicates: 0,
          invalid: [{ row: 3, phone: "12", reason: "must be a phone number with its country code, e.g. +919876543210" }],
          invalid_count: 1
        },
        returns: "The import's report."
      }))
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app")
  .annotate(OpenApi.Description, "Bulk upserts of contacts from a streamed CSV or NDJSON file (docs/app-api.md, Import).") {}

const Segment = Schema.Struct({
  id: Schema.String.annotations({ description: "The segment's id." }),
  name: Schema.String.annotations({ description: "The segment's name, unique in the account." }),
  filters: Schema.Array(Schema.Unknown).annotations({
    description: "The trait filters, [{trait, op, value}] as POST /api/v1/public/customers/search takes them: a contact must match every one."
  }),
  tags: Schema.Array(Schema.String).annotations({ description: "The tags a contact must all have." }),
  customer_count: Schema.Int.annotations({ description: "How many contacts match now (counted when the segment is read, never stored)." }),
  created_at: Schema.String.annotations({ description: "When the segment was created (ISO 8601, UTC)." }),
  updated_at: Schema.String.annotations({ description: "When the segment was last changed (ISO 8601, UTC)." })
}).annotations({ description: "A segment: a saved customer search with a live count." })
const SegmentAnswer = Schema.Struct({ success: Schema.Literal(true), segment: Segment })
const SegmentFields = {
  filters: Schema.optional(Schema.Array(TraitFilter)).annotations({
    description: "Trait filters a contact must all match, at most 20, as POST /api/v1/public/customers/search takes them. Given, they replace the " +
      "segment's; absent: none (create) or unchanged (change)."
  }),
  tags: Schema.optional(Schema.Array(Schema.String)).annotations({
    description: "Tags a contact must all have, at most 20 (each 1 to 64 characters). Given, they replace the segment's; absent: none (create) or unchanged (change)."
  })
}
const SegmentPath = Schema.Struct({ id: Schema.String.annotations({ description: "The segment's id." }) })

const SEGMENT = {
  id: "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f",
  name: "Gold in Pune",
  filters: [{ trait: "plan", op: "eq", value: "gold" }, { trait: "city", op: "eq", value: "Pune" }],
  tags: ["customer"],
  customer_count: 2,
  created_at: "2026-02-27T16:05:12.345Z",
  updated_at: "2026-02-27T16:05:12.345Z"
}

/** /api/v1/app/segments: saved customer searches with a live count (docs/app-api.md). */
export class SegmentsApi extends HttpApiGroup.make("appSegments")
  .add(
    HttpApiEndpoint.get("listSegments", "/segments")
      .setUrlParams(Schema.Struct({ limit: limitParam(SEGMENTS_LIMIT_MAX, SEGMENTS_LIMIT_DEFAULT), cursor: CursorParam }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        segments: Schema.Array(Segment).annotations({ description: "The segments on this page, newest first." }),
        next_cursor: NextCursor
      }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "List the segments",
        description: "The account's segments, newest first, by cursor, each with its live `customer_count` (a count in Postgres per segment, two at " +
          "a time: keep pages small on accounts with millions of contacts). A secret key, on Growth and up.",
        response: { success: true, segments: [SEGMENT], next_cursor: "" },
        returns: "A page of segments."
      }))
  )
  .add(
    HttpApiEndpoint.post("createSegment", "/segments")
      .setPayload(Schema.Struct({
        name: Schema.String.annotations({ description: "The segment's name, 1 to 100 characters after trimming, unique in the account." }),
        ...SegmentFields
      }))
      .addSuccess(SegmentAnswer)
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Save a customer search as a segment",
        description: "`filters` and `tags` are checked by the parser of POST /api/v1/public/customers/search (docs/customers.md lists every operator); " +
          "bad input is 400 naming every problem. A name the account already uses is 409 `conflict` (`key: \"name\"`). A secret key, on Growth and up.",
        request: { name: "Gold in Pune", filters: [{ trait: "plan", op: "eq", value: "gold" }, { trait: "city", op: "eq", value: "Pune" }], tags: ["customer"] },
        response: { success: true, segment: SEGMENT },
        returns: "The new segment, with its count."
      }))
  )
  .add(
    HttpApiEndpoint.get("getSegment", "/segments/:id")
      .setPath(SegmentPath)
      .addSuccess(SegmentAnswer)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read a segment",
        description: "One segment, with the number of contacts it matches now. Another account's id, or one that is not an id, is 404. A secret key, on Growth and up.",
        response: { success: true, segment: SEGMENT },
        returns: "The segment."
      }))
  )
  .add(
    HttpApiEndpoint.patch("updateSegment", "/segments/:id")
      .setPath(SegmentPath)
      .setPayload(Schema.Struct({
        name: Schema.optional(Schema.String).annotations({ description: "A new name, 1 to 100 characters after trimming, unique in the account." }),
        ...SegmentFields
      }))
      .addSuccess(SegmentAnswer)
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Change a segment",
        description: "Only the fields given change; `filters` and `tags` replace the segment's. Checked as on creation (400, or 409 `conflict` for a " +
          "name in use). A secret key, on Growth and up.",
        request: { filters: [{ trait: "plan", op: "in", value: ["gold", "platinum"] }, { trait: "city", op: "eq", value: "Pune" }] },
        response: {
          success: true,
          segment: {
            ...SEGMENT,
            filters: [{ trait: "plan", op: "in", value: ["gold", "platinum"] }, { trait: "city", op: "eq", value: "Pune" }],
            customer_count: 3,
            updated_at: "2026-03-02T10:00:00.000Z"
          }
        },
        returns: "The segment as it is now."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteSegment", "/segments/:id")
      .setPath(SegmentPath)
      .addSuccess(Deleted)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Delete a segment",
        description: "Deletes the saved search; its contacts stay. A secret key, on Growth and up.",
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .add(
    HttpApiEndpoint.get("segmentContacts", "/segments/:id/contacts")
      .setPath(SegmentPath)
      .setUrlParams(Schema.Struct({ limit: limitParam(CUSTOMERS_LIMIT_MAX, CUSTOMERS_LIMIT_DEFAULT), cursor: CursorParam }))
      .addSuccess(ContactPage)
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "List the contacts a segment matches now",
        description: "The contacts matching the segment's filters and tags at the time of the request, newest first, by cursor. A secret key, on Growth and up.",
        response: { success: true, contacts: [CONTACT, OTHER_CONTACT], next_cursor: "" },
        returns: "A page of the segment's contacts."
      }))
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app")
  .annotate(OpenApi.Description, "Segments: saved customer searches (trait filters and tags, as the public search takes them) with a live count of " +
    "the contacts they match.") {}
