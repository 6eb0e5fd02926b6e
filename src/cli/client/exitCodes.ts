import { Schema } from "effect"

/** The client commands' exit codes (`herald connect`, `disconnect`, `api`, `contacts import`). */
export const ExitCode = {
  /** a 2xx answer */
  ok: 0,
  /** an HTTP error answer, or a refused key */
  httpError: 1,
  /** a usage error: a bad argument or option, a body that is not JSON or over 10 MB */
  usage: 2,
  /** the server cannot be reached */
  unreachable: 3,
  /** no connection stored: run `herald connect` first */
  notConnected: 4
} as const

/** A bad argument, option or body, found before anything is sent. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { message: Schema.String }) {
  get code() {
    return "usage_error"
  }
  get exitCode() {
    return ExitCode.usage
  }
}

/** The server did not answer: refused connection, unknown host, reset, time-out. */
export class ServerUnreachable extends Schema.TaggedError<ServerUnreachable>()("ServerUnreachable", { message: Schema.String }) {
  get code() {
    return "server_unreachable"
  }
  get exitCode() {
    return ExitCode.unreachable
  }
}

/** No readable config file. */
export class NotConnected extends Schema.TaggedError<NotConnected>()("NotConnected", { message: Schema.String }) {
  get code() {
    return "not_connected"
  }
  get exitCode() {
    return ExitCode.notConnected
  }
}

/**
 * The server answered with an error: `answerCode` is the answer's `code`. With `printed`, the
 * answer itself is already on stdout (`api`, `contacts import`) and nothing more is printed;
 * otherwise (`connect`) `message` says what happened, on stderr.
 */
export class AnswerFailed extends Schema.TaggedError<AnswerFailed>()("AnswerFailed", {
  status: Schema.Number,
  answerCode: Schema.String,
  message: Schema.String,
  printed: Schema.Boolean
}) {
  get code() {
    return this.answerCode
  }
  get exitCode() {
    return ExitCode.httpError
  }
}

export type ClientFailure = UsageError | ServerUnreachable | NotConnected | AnswerFailed

export const isClientFailure = (u: unknown): u is ClientFailure =>
  u instanceof UsageError || u instanceof ServerUnreachable || u instanceof NotConnected || u instanceof AnswerFailed
