import { Schema } from "effect"

/**
 * The instants Herald takes from clients: years 0001 to 9999, in UTC. JavaScript dates reach
 * ±275,760 years and Postgres' timestamptz runs from 4713 BC, but neither year 0 nor a
 * six-digit year (`+275760-…`) survives the trip to Postgres in ISO form, and no date a client
 * means lies outside this range.
 */
export const EARLIEST_MS = Date.parse("0001-01-01T00:00:00.000Z")
export const LATEST_MS = Date.parse("9999-12-31T23:59:59.999Z")

export const inStorableRange = (ms: number): boolean => Number.isFinite(ms) && ms >= EARLIEST_MS && ms <= LATEST_MS

/** An ISO 8601 date-time from a client, decoded to a Date within the storable range. */
export const Timestamp = Schema.Date.pipe(
  Schema.filter((date) => inStorableRange(date.getTime()) || "must be a date between 0001-01-01 and 9999-12-31")
).annotations({ description: "ISO 8601 date-time, UTC" })

const UTC_MICROS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/

/**
 * Whether `text` is a real instant written as Postgres prints a timestamptz to the microsecond
 * (`YYYY-MM-DDTHH:MM:SS.ffffffZ`), in the storable range: a form alone lets `2025-02-30` or
 * `0000-…` through to Postgres, which refuses them.
 */
export const isUtcMicros = (text: string): boolean => {
  const m = UTC_MICROS.exec(text)
  if (m === null) return false
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number]
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, 0)
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day &&
    date.getUTCHours() === hour && date.getUTCMinutes() === minute && date.getUTCSeconds() === second
}
