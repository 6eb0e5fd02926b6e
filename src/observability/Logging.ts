import { Cause, HashMap, Inspectable, Layer, List, Logger, type LogLevel } from "effect"
import type { LogFormat } from "../config/AppConfig.ts"

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
 * Structured JSON lines (or Effect's pretty format in a terminal) at the configured level. The
 * CLI's one-shot commands log to stderr so that their stdout stays pure JSON for scripts.
 */
export const loggingLayer = (options: {
  readonly format: LogFormat
  readonly level: LogLevel.LogLevel
  readonly stderr?: boolean
}): Layer.Layer<never> => {
  const base = options.format === "json" ? jsonLineLogger : Logger.prettyLoggerDefault
  const logger = options.stderr ? Logger.withConsoleError(base) : Logger.withConsoleLog(base)
  return Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(options.level))
}
