import { Schema } from "effect"

/**
 * The instants Herald takes from clients: years 0001 to 9999, in UTC. JavaScript dates reach
 * ±275,760 years and Postgres' timestamptz runs from 4713 BC, but neither year 0 nor a
 * six-digit year (`+275760-…`) survives the trip to Postgres in ISO form, and no date a client
 * means lies outside this range.
 */
const EARLIEST_MS = Date.parse("0001-01-01T00:00:00.000Z")
const LATEST_MS = Date.parse("9999-12-31T23:59:59.999Z")

const inStorableRange = (ms: number): boolean => Number.isFinite(ms) && ms >= EARLIEST_MS && ms <= LATEST_MS

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))?)?$/i

/**
 * Whether `text` is an ISO 8601 date or date-time naming a real day and time: JavaScript's parser
 * takes `2025-02-30` as 2 March, and many forms that are not ISO at all.
 */
const isIsoDateTime = (text: string): boolean => {
  const m = ISO_8601.exec(text)
  if (m === null) return false
  const [year, month, day, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = m.slice(1).map((part) => (part === undefined ? undefined : Number(part)))
  // Day 0 of the next month is this month's last (years 0-99 read as 1900-1999: the same leap years but year 0).
  const days = new Date(Date.UTC(year!, month!, 0)).getUTCDate()
  return month! >= 1 && month! <= 12 && day! >= 1 && day! <= days && hour <= 23 && minute <= 59 && second <= 59 && offsetHours <= 23 && offsetMinutes <= 59
}

/** An ISO 8601 date-time from a client, decoded to a Date within the storable range. */
export const Timestamp = Schema.compose(
  Schema.String.pipe(Schema.filter((text) => isIsoDateTime(text) || "must be an ISO 8601 date-time, such as 2026-11-24T10:00:00Z")),
  Schema.Date
).pipe(
  Schema.filter((date) => inStorableRange(date.getTime()) || "must be a date between 0001-01-01 and 9999-12-31")
).annotations({ description: "ISO 8601 date-time, UTC" })

const UTC_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

/**
 * Whether `text` is a real instant written as Postgres prints a timestamptz to the microsecond
 * (`YYYY-MM-DDTHH:MM:SS.ffffffZ`), in the storable range: a form alone lets `2025-02-30` or
 * `0000-…` through to Postgres, which refuses them.
 */
export const isUtcMicros = (text: string): boolean => UTC_MICROS.test(text) && isIsoDateTime(text) && inStorableRange(Date.parse(text))
