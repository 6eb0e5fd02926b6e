import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ImportTooLarge, UnsupportedMediaType, UploadInterrupted, UploadStalled } from "../../contacts/errors.ts"
import { IMPORT_MAX_BYTES, INVALID_REPORTED_MAX, INVALID_ROWS_MAX, NAME_MAX, PARAMS_MAX_BYTES } from "../../contacts/importLimits.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"

export const UnsupportedMediaTypeResponse = errorResponse(UnsupportedMediaType, 415, "unsupported_media_type")
export const ImportTooLargeResponse = errorResponse(ImportTooLarge, 413, "payload_too_large")
export const UploadInterruptedResponse = errorResponse(UploadInterrupted, 400, "upload_interrupted")
export const UploadStalledResponse = errorResponse(UploadStalled, 408, "request_timeout")

/**
 * An import's report (src/contacts/importTally.ts): every data row added, a duplicate or invalid.
 * Shared with the customer import (src/http/app/ContactsApi.ts), which gives duplicates its own meaning.
 */
export const ImportReportFields = {
  success: Schema.Literal(true),
  added: Schema.Int.annotations({ description: "Data rows that added a new contact." }),
  duplicates: Schema.Int.annotations({
    description: "Valid rows whose E.164 number was already in the list, from this import or an earlier one: the first is kept, later ones are dropped."
  }),
  invalid: Schema.Array(Schema.Struct({
    row: Schema.Int.annotations({
      description: "The 1-based number of the data row: the element of the contacts array, the non-blank NDJSON line or the CSV record after the " +
        "header (not a line number)."
    }),
    phone: Schema.String.annotations({ description: "The phone as the row gave it, cut to 64 characters; empty when the row had none." }),
    reason: Schema.String.annotations({ description: "Why the row was refused, for a person." })
  })).annotations({ description: `The first ${INVALID_REPORTED_MAX} invalid rows, in order. None of them was written.` }),
  invalid_count: Schema.Int.annotations({ description: `Invalid rows in all, those past the first ${INVALID_REPORTED_MAX} included.` })
}

const ListId = Schema.String.annotations({ description: "The contact list's id (list_id)." })

const ContactList = Schema.Struct({
  list_id: Schema.String.annotations({ description: "The list's id." }),
  name: Schema.String.annotations({ description: "Its name, unique among the account's live lists (case matters)." }),
  contact_count: Schema.Int.annotations({ description: "Contacts in the list: each distinct phone number once." }),
  created_at: Schema.String.annotations({ description: "When it was created (ISO 8601, UTC)." })
}).annotations({ description: "A contact list: recipients for broadcasts, shared by the whole account (it belongs to no bot)." })

const Contact = Schema.Struct({
  contact_id: Schema.String.annotations({ description: "The contact's id: an integer, as a string, that grows in import order." }),
  // E.164.
  phone: Schema.String.annotations({ description: "The phone number in E.164, with the leading '+'; unique within the list." }),
  name: Schema.NullOr(Schema.String).annotations({ description: "The contact's name, trimmed; null when the import gave none. Fills a broadcast's {{name}}." }),
  params: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "The contact's other values, which fill a broadcast's {{<param>}} placeholders: a JSON or NDJSON row's params as given (nested " +
      "values included), or a CSV row's other columns as strings, by header. {} when there are none."
  }),
  created_at: Schema.String.annotations({ description: "When it was imported (ISO 8601, UTC)." })
}).annotations({ description: "A contact of a list: one recipient of the broadcasts that use it." })

const ListPath = Schema.Struct({ list_id: ListId })

/** The query of a page of a newest-first list (DESIGN.md, Lists), broadcasts' too; PageCount and NextCursor are what its answer adds. */
export const PageFields = {
  // Above the maximum (1000) is served as the maximum.
  limit: Schema.optional(
    Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), describe("Rows on the page: 100 by default; above 1,000 is served as 1,000."))
  ),
  cursor: Schema.optional(Schema.String.annotations({
    description: "The next_cursor of the previous page, passed back verbatim; absent for the first page. A cursor this list did not give out is 400."
  }))
}
export const PageCount = Schema.Int.annotations({ description: "Rows on this page." })
export const NextCursor = Schema.String.annotations({ description: "Pass it as cursor for the next page; absent on the last page." })

const PageParams = Schema.Struct(PageFields)

const ListAnswer = Schema.Struct({ success: Schema.Literal(true), list: ContactList })

const LIST = {
  list_id: "7c6b5a49-3827-4165-9e4f-d3c2b1a09f8e",
  name: "Diwali 2026 customers",
  contact_count: 12480,
  created_at: "2026-03-01T09:30:00.000Z"
}

const CONTACT = {
  contact_id: "1042",
  phone: "+919812345678",
  name: "Asha",
  params: { city: "Pune", offer: { pct: 20 } },
  created_at: "2026-03-01T09:41:12.000Z"
}

/** Contact lists (DESIGN.md, Contact lists; docs/contact-lists.md), served by HttpApi. */
export class ContactListsApi extends HttpApiGroup.make("contactLists")
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(Schema.Struct({
        name: Schema.Trim.pipe(
          Schema.minLength(1),
          Schema.maxLength(100),
          describe("1 to 100 characters after trimming, unique among the account's live lists (case matters).")
        )
      }))
      .addSuccess(ListAnswer)
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Create a contact list",
        description: "Makes an empty list; import its contacts with POST /api/v1/rcs/contact-lists/{list_id}/contacts. A name already used by a " +
          "live list of the account is 409 `conflict` (`key: \"name\"`); a deleted list's name is free again. Lists belong to the account, " +
          "not to a bot, so a bot-scoped member makes them like any other. An operator or the owner, with a user token (API keys cannot).",
        request: { name: LIST.name },
        response: { success: true, list: { ...LIST, contact_count: 0 } },
        returns: "The new, empty list."
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .setUrlParams(PageParams)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        lists: Schema.Array(ContactList).annotations({ description: "The account's live lists, newest first." }),
        count: PageCount,
        // Absent on the last page.
        next_cursor: Schema.optional(NextCursor)
      }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "List the contact lists",
        description: "The account's live lists, newest first, by cursor; deleted lists are left out. A user token of any role (every " +
          "member sees every list), or an API key with contacts:read (contacts:write grants it).",
        response: { success: true, lists: [LIST], count: 1 },
        returns: "A page of lists."
      }))
  )
  .add(
    HttpApiEndpoint.get("get", "/:list_id")
      .setPath(ListPath)
      .addSuccess(ListAnswer)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read a contact list",
        description: "One live list with its contact count. Another account's list, a deleted one, an unknown id and a malformed id are " +
          "all 404. A user token of any role (not an API key).",
        response: { success: true, list: LIST },
        returns: "The list."
      }))
  )
  .add(
    HttpApiEndpoint.del("remove", "/:list_id")
      .setPath(ListPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Delete a contact list",
        description: "The list disappears from every read at once and takes no more imports; its name is free again. Broadcasts already " +
          "made from it still reach its contacts. Refused with 409 `conflict` (`key: \"list_id\"`) while an import into it runs; a second " +
          "DELETE is 404. An operator or the owner, with a user token.",
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .add(
    HttpApiEndpoint.get("contacts", "/:list_id/contacts")
      .setPath(ListPath)
      .setUrlParams(PageParams)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        contacts: Schema.Array(Contact).annotations({ description: "The list's contacts, newest first (the last imported first)." }),
        count: PageCount,
        // Absent on the last page.
        next_cursor: Schema.optional(NextCursor)
      }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "List a contact list's contacts",
        description: "The contacts of one live list, newest first, by cursor. Personal data: a user token of any role, never an API key.",
        response: {
          success: true,
          contacts: [CONTACT, { ...CONTACT, contact_id: "1041", phone: "+919876543210", name: null, params: {}, created_at: "2026-03-01T09:41:12.000Z" }],
          count: 2
        },
        returns: "A page of contacts."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/contact-lists")
  .annotate(OpenApi.Description, "Contact lists: the account's lists of recipients (phone, name, params) that broadcasts send to (docs/contact-lists.md).") {}

const ContactInput = Schema.Struct({
  phone: Schema.String.annotations({
    description: "The phone number with its country code ('+' optional); spaces, dashes, dots, slashes and brackets are tolerated. Stored in E.164."
  }),
  name: Schema.optional(Schema.String.annotations({
    description: `The contact's name, at most ${NAME_MAX} characters, stored trimmed; it fills a broadcast's {{name}}.`
  })),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: `Values for a broadcast's {{<param>}} placeholders (a dotted {{order.id}} reads into nested objects): any JSON object, at most ` +
      `${PARAMS_MAX_BYTES / 1024} KiB as JSON.`
  }))
}).annotations({ description: "One contact to import." })

const MIB = IMPORT_MAX_BYTES / (1024 * 1024)

const IMPORT_NDJSON = [
  `{"phone": "+919812345678", "name": "Asha", "params": {"city": "Pune"}}`,
  `{"phone": "+91 98765 43210", "name": "Ravi", "params": {"city": "Mumbai"}}`,
  `{"phone": "09811122233", "name": "Meera"}`
].join("\n") + "\n"

const IMPORT_CSV = "phone,name,city\n+919812345678,Asha,Pune\n+91 98765 43210,Ravi,Mumbai\n09811122233,Meera,\n"

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
        Schema.Struct({ contacts: Schema.Array(ContactInput).annotations({ description: "The contacts, in order. Other members of the body are ignored." }) }),
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "application/x-ndjson" })).annotations({
          description: "One JSON object {phone, name?, params?} a line, as in the JSON body's contacts; blank lines are skipped."
        }),
        Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })).annotations({
          description: "A header row with a phone column (name optional; names matched case-insensitively), then one contact a record " +
            "(RFC 4180). Every other column goes into params as a string, under its header."
        })
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
      .annotateContext(documented({
        summary: "Import contacts into a list",
        description: `Imports contacts as JSON {contacts:[…]}, NDJSON (one contact a line; application/ndjson is taken too) or CSV with a ` +
          `header row, chosen by Content-Type (any other is 415 \`unsupported_media_type\`). The body is UTF-8 and streamed: up to ${MIB} MiB ` +
          `(413 \`payload_too_large\`). A JSON or NDJSON phone may also be a number, as spreadsheets export it.\n\n` +
          `Phones are normalised to E.164. Every data row ends up added, a duplicate (its number already in the list) or invalid, so ` +
          `added + duplicates + invalid_count is the number of data rows read; the first ${INVALID_REPORTED_MAX} invalid rows are listed.\n\n` +
          `All or nothing: a body that cannot be read (400 \`invalid_request\` naming where it broke), that breaks off (400 ` +
          `\`upload_interrupted\`) or stalls (408 \`request_timeout\`) leaves nothing written; so does one whose invalid rows pass ` +
          `${INVALID_ROWS_MAX.toLocaleString("en")} and are most of those read (400). Another import into the list or its deletion running is ` +
          `409 \`conflict\`. Takes an Idempotency-Key. An operator or the owner, with a user token; role, format and list are checked ` +
          `before the body is read.`,
        request: {
          contacts: [
            { phone: "+919812345678", name: "Asha", params: { city: "Pune" } },
            { phone: "+91 98765 43210", name: "Ravi", params: { city: "Mumbai" } },
            { phone: "09811122233", name: "Meera" }
          ]
        },
        requestBodies: { "application/x-ndjson": IMPORT_NDJSON, "text/csv": IMPORT_CSV },
        response: {
          success: true,
          added: 2,
          duplicates: 0,
          invalid: [
            { row: 3, phone: "09811122233", reason: "has no country code: write it with + and its country code (+919811122233 if it is a number in India)" }
          ],
          invalid_count: 1
        },
        returns: "The import report: what became of every data row."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/contact-lists")
  .annotate(OpenApi.Description, `Bulk import of contacts into a contact list: JSON, NDJSON or CSV, streamed (up to ${MIB} MiB), all or nothing.`) {}
