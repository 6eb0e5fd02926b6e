import { Schema } from "effect"

/** A state-changing console request without the session's CSRF token, or from another origin (docs/console.md). */
export class CsrfFailed extends Schema.TaggedError<CsrfFailed>()("CsrfFailed", {
  message: Schema.String
}) {}
