/**
 * An ISO 8601 date (`2024-05-01`) or date-time (`2024-05-01T10:00:00Z`, `…+05:30`, `…` with no
 * offset), as the epoch milliseconds of its instant; undefined for anything else. A date, or a
 * time without offset, is UTC; an offset is at most ±15:59, as Postgres takes. The same rule as the database's `herald_iso_instant` (migration
 * 0018), which reads the traits a filter compares with: the two must agree, and a test holds them
 * to it.
 */
const ISO = /^([1-9]\d{3})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?:[T ]([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.(\d{1,6}))?)?(Z|[+-](?:0\d|1[0-5])(?::?[0-5]\d)?)?)?$/

const offsetMinutes = (zone: string | undefined): number => {
  if (zone === undefined || zone === "Z") return 0
  const sign = zone.startsWith("-") ? -1 : 1
  const digits = zone.slice(1).replace(":", "")
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || "0"))
}

export const isoInstant = (value: string): number | undefined => {
  const m = ISO.exec(value)
  if (m === null) return undefined
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  // Day 0 of the next month is the last day of this one.
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined
  const fraction = m[7] === undefined ? 0 : Number(m[7].padEnd(6, "0")) / 1000
  const utc = Date.UTC(year, month - 1, day, Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)) + fraction
  return utc - offsetMinutes(m[8]) * 60_000
}
