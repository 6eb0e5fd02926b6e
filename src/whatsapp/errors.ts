import { Schema } from "effect"
import { FieldIssue } from "../domain/errors.ts"

/** 409 no_wa_number: the account has no WhatsApp number to send from (an operator onboards one). */
export class NoWaNumber extends Schema.TaggedError<NoWaNumber>()("NoWaNumber", { message: Schema.String }) {}

/** 422 outside_service_window: a free-form message to a customer who has not written in the last 24 hours. */
export class OutsideServiceWindow extends Schema.TaggedError<OutsideServiceWindow>()("OutsideServiceWindow", { message: Schema.String }) {}

/** 422 recipient_opted_out: a MARKETING template to a customer who opted out of marketing (customers/optOut.ts). */
export class RecipientOptedOut extends Schema.TaggedError<RecipientOptedOut>()("RecipientOptedOut", { message: Schema.String }) {}

/** 400 template_not_usable: no APPROVED template of that name and language. */
export class TemplateNotUsable extends Schema.TaggedError<TemplateNotUsable>()("TemplateNotUsable", { message: Schema.String }) {}

/** 400 template validation failure, as RCS templates answer it: hard errors and warnings. */
export class WaTemplateInvalid extends Schema.TaggedError<WaTemplateInvalid>()("WaTemplateInvalid", {
  message: Schema.String,
  errors: Schema.Array(Schema.String),
  warnings: Schema.Array(Schema.String),
  /** `errors` in the `{path, message}` shape of every other validation error. */
  issues: Schema.Array(FieldIssue)
}) {}
