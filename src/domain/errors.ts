import { Effect, type ParseResult, Schema } from "effect"
import { plainIssues, sentenceOf } from "./plainIssues.ts"

/**
 * Expected failures shared by every capability. Each carries the message a client reads; the HTTP
 * edge (src/http/errors.ts) gives each its status and stable `code`.
 */

export class FieldIssue extends Schema.Class<FieldIssue>("FieldIssue")({
  path: Schema.String,
  message: Schema.String
}) {}

/** The message of a 400 `invalid_request`: every issue as a sentence that names its field. */
export const describeIssues = (issues: ReadonlyArray<{ readonly path: string; readonly message: string }>) =>
  issues.length > 0 ? issues.map((i) => (i.path ? `${i.path} ${i.message}` : i.message)).join("; ") : "the request is not valid"

const PATH_PREFIX = /^([A-Za-z_][\w.[\]-]*): (.*)$/s

/**
 * Problems written as "path: message" lines (content limits, template checks) in the shape of every
 * other validation error, `{path, message}`.
 */
export const fieldIssuesOf = (lines: ReadonlyArray<string>): Array<FieldIssue> =>
  lines.map((line) => {
    const match = PATH_PREFIX.exec(line)
    return match === null ? new FieldIssue({ path: "", message: line }) : new FieldIssue({ path: match[1]!, message: match[2]! })
  })

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String,
  errors: Schema.Array(FieldIssue)
}) {
  static readonly single = (path: string, message: string) =>
    new InvalidRequest({ message: path ? `${path} ${message}` : message, errors: [new FieldIssue({ path, message })] })

  /** A decode failure of one value (a field decoded on its own), in plain sentences under `field`. */
  static readonly ofValue = (field: string, error: ParseResult.ParseError) => {
    const errors = plainIssues(error).map((issue) => new FieldIssue({ path: issue.path === "" ? field : `${field}.${issue.path}`, message: issue.message }))
    return new InvalidRequest({ message: errors.map(sentenceOf).join("; "), errors })
  }
}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String
}) {}

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String,
  key: Schema.String
}) {}

/** A dependency (Postgres, NATS) did not answer: the request may succeed if retried later. */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  message: Schema.String
}) {}

export class EmailTaken extends Schema.TaggedError<EmailTaken>()("EmailTaken", {
  message: Schema.String
}) {}

export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", {
  message: Schema.String
}) {}

export class UserNotFound extends Schema.TaggedError<UserNotFound>()("UserNotFound", {
  message: Schema.String
}) {}

/**
 * Missing, expired, tampered or revoked credentials. `message` is the contract's fixed text;
 * `detail` says what was wrong with this request's credential, so a person can fix it.
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String,
  detail: Schema.optional(Schema.String)
}) {
  static readonly because = (detail: string) => new Unauthorized({ message: "unauthorized", detail })
}

export class InvalidCredentials extends Schema.TaggedError<InvalidCredentials>()("InvalidCredentials", {
  message: Schema.String
}) {}

export class InvalidCode extends Schema.TaggedError<InvalidCode>()("InvalidCode", {
  message: Schema.String
}) {}

export class TooManyAttempts extends Schema.TaggedError<TooManyAttempts>()("TooManyAttempts", {
  message: Schema.String,
  retry_after_seconds: Schema.Number
}) {}

/** An unknown, revoked or expired key; `detail` as for Unauthorized. */
export class InvalidApiKey extends Schema.TaggedError<InvalidApiKey>()("InvalidApiKey", {
  message: Schema.String,
  detail: Schema.optional(Schema.String)
}) {
  static readonly because = (detail: string) => new InvalidApiKey({ message: "Invalid or revoked API key", detail })
}

export class ApiKeyEndpointNotAllowed extends Schema.TaggedError<ApiKeyEndpointNotAllowed>()("ApiKeyEndpointNotAllowed", {
  message: Schema.String
}) {}

export class MissingScope extends Schema.TaggedError<MissingScope>()("MissingScope", {
  message: Schema.String
}) {}

/** The caller's role does not allow the operation. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}) {}

export class BotNotInScope extends Schema.TaggedError<BotNotInScope>()("BotNotInScope", {
  message: Schema.String
}) {
  static readonly instance = () => new BotNotInScope({ message: "bot not in scope" })
}

/** A rate-limit bucket is empty (per API key, or the account's plan). */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  message: Schema.String,
  retry_after_sec: Schema.Number
}) {}

/** The account's plan does not include the surface (Starter has no public API). */
export class FeatureLocked extends Schema.TaggedError<FeatureLocked>()("FeatureLocked", {
  message: Schema.String
}) {}

/** A service's field names in its refusals, as the caller's input names them (GraphQL's input, /app's send-text). */
export const renameFields = <A, E, R>(effect: Effect.Effect<A, E, R>, names: Readonly<Record<string, string>>) =>
  Effect.mapError(effect, (error): E => {
    if ((error as { readonly _tag?: string } | undefined)?._tag !== "InvalidRequest") return error
    const errors = (error as unknown as InvalidRequest).errors.map((issue) => new FieldIssue({ path: renamed(issue.path, names), message: issue.message }))
    return new InvalidRequest({ message: describeIssues(errors), errors }) as unknown as E
  })

const renamed = (path: string, names: Readonly<Record<string, string>>) => {
  for (const [from, to] of Object.entries(names)) {
    if (path === from || path.startsWith(`${from}.`) || path.startsWith(`${from}[`)) return `${to}${path.slice(from.length)}`
  }
  return path
}
