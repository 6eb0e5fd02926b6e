import { Cause, Context, FiberRef, FiberRefs, HashMap, Inspectable, Layer, List, Logger, type LogLevel, Option } from "effect"

/** How log lines are written: one JSON object per line, or for a person at a terminal. */
export type LogFormat = "json" | "pretty"

/**
 * One JSON object per line: `time`, `level`, `msg`, then the log annotations (request_id, kind,
 * partition, ...) and the fields of any object passed to the log call, flattened so that log
 * pipelines can index them. A failure's cause is rendered under `cause`.
 */
const jsonLineLogger = Logger.make<unknown, string>(({ annotations, cause, date, logLevel, message, spans }) => {
  const line: Record<string, unknown> = { time: date.toISOString(), level: logLevel.label.toLowerCase() }
  const texts: Array<string> = []
  for (const part of Array.isArray(message) ? message : [message]) {
    if (part !== null && typeof part === "object" && !(part instanceof Error)) Object.assign(line, part)
    else texts.push(part instanceof Error ? part.message : String(part))
  }
  line.msg = texts.join(" ")
  for (const [key, value] of HashMap.toEntries(annotations)) line[key] = value
  if (!List.isNil(spans)) line.spans = List.toArray(spans).map((s) => s.label)
  if (!Cause.isEmpty(cause)) line.cause = Cause.pretty(cause, { renderErrorCause: true })
  return JSON.stringify(line, (_key, value) => (typeof value === "bigint" ? value.toString() : Inspectable.redact(value)))
})

/**
 * Log annotations carried in a fiber's context rather than in its log-annotation FiberRef: the HTTP
 * adapter puts a request's id here when it builds the request's context, which costs nothing,
 * where setting the FiberRef for each request cost a copy of the fiber's refs.
 */
export class ContextLogAnnotations extends Context.Tag("herald/observability/ContextLogAnnotations")<
  ContextLogAnnotations,
  ReadonlyArray<readonly [string, unknown]>
>() {}

const withContextAnnotations = <Output>(logger: Logger.Logger<unknown, Output>) =>
  Logger.mapInputOptions(logger, (options) => {
    const extra = Context.getOption(FiberRefs.getOrDefault(options.context, FiberRef.currentContext), ContextLogAnnotations)
    if (Option.isNone(extra)) return options
    let annotations = options.annotations
    for (const [key, value] of extra.value) annotations = HashMap.set(annotations, key, value)
    return { ...options, annotations }
  })

/**
 * Structured JSON lines (or Effect's pretty format in a terminal) at the configured level. The
 * CLI's one-shot commands log to stderr so that their stdout stays pure JSON for scripts.
 */
export const loggingLayer = (options: {
  readonly format: LogFormat
  readonly level: LogLevel.LogLevel
  readonly stderr?: boolean
}): Layer.Layer<never> => {
  // The pretty logger writes its lines itself (to stderr when asked); wrapping it in a console
  // would print its `undefined` result as a line of its own.
  const logger = options.format === "json"
    ? (options.stderr ? Logger.withConsoleError : Logger.withConsoleLog)(withContextAnnotations(jsonLineLogger))
    : withContextAnnotations(Logger.prettyLogger({ stderr: options.stderr === true }))
  return Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(options.level))
}
