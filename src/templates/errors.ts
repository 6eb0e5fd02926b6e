import { Schema } from "effect"
import { FieldIssue, fieldIssuesOf } from "../domain/errors.ts"

/**
 * Template creation needs a bot of the caller's account in status active (contract, Errors:
 * no_active_bot). A pending, rejected or suspended bot, or another account's, is refused alike.
 */
export class NoActiveBot extends Schema.TaggedError<NoActiveBot>()("NoActiveBot", {
  message: Schema.String
}) {
  static readonly instance = () => new NoActiveBot({ message: "template creation needs an active bot of this account" })
}

/**
 * The content breaks RCS limits (contract, "Template validation failure"): every hard error that
 * blocks the submit, and the warnings that would not have, so a client fixes all in one go.
 * `errors` and `warnings` are the contract's strings; `issues` carries the same errors in the
 * `{path, message}` shape of every other validation error (docs/templates.md).
 */
export class TemplateInvalid extends Schema.TaggedError<TemplateInvalid>()("TemplateInvalid", {
  message: Schema.String,
  errors: Schema.Array(Schema.String),
  warnings: Schema.Array(Schema.String),
  issues: Schema.Array(FieldIssue)
}) {
  static readonly of = (errors: ReadonlyArray<string>, warnings: ReadonlyArray<string>) =>
    new TemplateInvalid({
      message: `the template breaks ${errors.length === 1 ? "an RCS limit" : `${errors.length} RCS limits`}: ${errors.join("; ")}`,
      errors,
      warnings,
      issues: fieldIssuesOf(errors)
    })
}
