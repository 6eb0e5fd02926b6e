import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Runtime } from "effect"
import { isoInstant } from "../../src/customers/isoInstant.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

// The JS reader of filter values (src/customers/isoInstant.ts) and the SQL reader of stored traits
// (herald_iso_instant, migration 0018) must agree on what is a date and on its instant: a filter
// compares one with the other.

const Env = Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive))).pipe(
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

/** What herald_iso_instant gave: its instant as integer microseconds since the epoch, null (not a date), or the error it raised. */
type Micros = string | null

/**
 * isoInstant's answer agrees with the database's: both "not a date", or the same instant. isoInstant
 * answers in (fractional) milliseconds, a double: exact to the microsecond near the epoch, to its
 * last bit (up to 62 µs in 9999) far from it; a misread field is off by far more.
 */
const agrees = (js: number | undefined, sql: Micros | undefined): boolean => {
  if (js === undefined || sql === null || sql === undefined || sql.startsWith("error")) return js === undefined && sql === null
  const tolerance = Math.max(Math.abs(js) * Number.EPSILON * 2, 0.0005)
  return Math.abs(Number(BigInt(sql)) / 1000 - js) <= tolerance
}

/** What herald_iso_instant makes of each string, in one round trip (one per string, naming the error, if it fails). */
const sqlMicros = (values: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const all = (batch: ReadonlyArray<string>) =>
      sql<{ micros: string | null }>`
        SELECT (extract(epoch FROM herald_iso_instant(s)) * 1000000)::bigint::text AS micros
        FROM unnest(${batch}::text[]) WITH ORDINALITY AS t(s, i) ORDER BY t.i`.pipe(Effect.map((rows) => rows.map((r): Micros => r.micros)))
    return yield* all(values).pipe(
      Effect.catchTag("SqlError", () =>
        Effect.forEach(values, (s) =>
          all([s]).pipe(
            Effect.map((rows) => rows[0]!),
            Effect.catchTag("SqlError", (e) => Effect.succeed<Micros>(`error: ${String((e.cause as { message?: string } | undefined)?.message ?? e.message)}`))
          )))
    )
  })

const TRICKY = [
  // Dates.
  "2024-05-01", "2024-02-29", "2023-02-29", "2100-02-29", "2000-02-29", "2024-04-30", "2024-04-31", "2024-06-31", "2024-12-31",
  "2024-00-10", "2024-13-01", "2024-01-00", "2024-01-32", "1000-01-01", "9999-12-31", "0999-12-31", "0000-01-01", "999-01-01", "10000-01-01",
  "2024-5-1", "2024/05/01", "20240501", "2024-05", "2024",
  // Date-times, no offset (UTC).
  "2024-05-01T10:00", "2024-05-01 10:00", "2024-05-01T10:00:59", "2024-05-01T23:59:59", "2024-05-01T00:00:00",
  "2024-05-01T24:00", "2024-05-01T24:00:00", "2024-05-01T23:60", "2024-05-01T23:59:60", "2024-05-01T10", "2024-05-01T1:00", "2024-05-01T10:0",
  "2024-05-01t10:00:00", "2024-05-01T", "2024-05-01T10:00:",
  // Offsets.
  "2024-05-01T10:00:00Z", "2024-05-01T10:00Z", "2024-05-01T10:00:00z", "2024-05-01T10:00:00+05", "2024-05-01T10:00:00+0530", "2024-05-01T10:00:00+05:30",
  "2024-05-01T10:00:00-08:00", "2024-05-01T10:00:00-0800", "2024-05-01T10:00:00-08", "2024-05-01T10:00:00+00:00", "2024-05-01T10:00:00-00:00",
  "2024-05-01T10:00:00+15:59", "2024-05-01T10:00:00-1559", "2024-05-01T10:00:00+14", "2024-05-01T10:00:00+24:00", "2024-05-01T10:00:00+25", "2024-05-01T10:00:00+05:60", "2024-05-01T10:00:00+5:30", "2024-05-01T10:00:00+05:3",
  "2024-05-01T10:00:00+053", "2024-05-01T10:00:00 +05:30", "2024-05-01T10:00:00ZZ", "2024-05-01+05:30", "2024-05-01Z", "2024-05-01 10:00+05:30",
  "2024-02-29T23:30:00-01:00", "2024-03-01T00:30:00+01:00", "2024-12-31T23:59:59.999999-14:00",
  // Fractional seconds.
  "2024-05-01T10:00:00.1", "2024-05-01T10:00:00.12", "2024-05-01T10:00:00.123", "2024-05-01T10:00:00.1234", "2024-05-01T10:00:00.12345",
  "2024-05-01T10:00:00.123456", "2024-05-01T10:00:00.1234567", "2024-05-01T10:00:00.999999Z", "2024-05-01T10:00:00.000001+05:30",
  "2024-05-01T10:00:00.", "2024-05-01T10:00.5", "2024-05-01T10:00:00,5",
  // Not dates at all.
  "", " ", "now", "today", "tomorrow", "infinity", "-infinity", "epoch", "allballs", "May 1, 2024", "Wed, 01 May 2024 10:00:00 GMT",
  "1", "0", "42", "1714557600", "1714557600000", "3.14", "-1", "1e3", "NaN", "true", "null",
  // Surrounding spaces and other characters.
  " 2024-05-01", "2024-05-01 ", " 2024-05-01T10:00:00Z ", "2024-05-01\n", "\t2024-05-01", "2024-05-01T10:00:00Z\n", "２０２４-05-01", "2024-05-01T10:00:00Z;"
]

layer(Env, { timeout: 60_000 })("isoInstant and herald_iso_instant", (it) => {
  it.effect("agree on every tricky string: date or not, and the instant", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReadyFor("30 seconds")
      const sql = yield* sqlMicros(TRICKY)
      // Not only agreement on "not a date": a good part of the list are dates.
      expect(TRICKY.filter((s) => isoInstant(s) !== undefined).length).toBeGreaterThan(30)
      const disagreements = TRICKY.flatMap((s, i) => (agrees(isoInstant(s), sql[i]) ? [] : [{ s, js: isoInstant(s), sql: sql[i] }]))
      expect(disagreements).toEqual([])
    }))

  // Offsets of 16 to 23 hours pass both patterns, but Postgres refuses a displacement beyond
  // ±15:59 ("time zone displacement out of range"): the SQL function then raises instead of
  // answering NULL, and isoInstant reads them as dates.
  it.effect("agree on offsets of 16 to 23 hours, and the database answers without an error", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const inputs = ["2024-05-01T10:00:00+16:00", "2024-05-01T10:00:00-16", "2024-05-01T10:00+1700", "2024-05-01T10:00:00+23:59", "2024-05-01 10:00:00.5-23:00"]
      const sql = yield* sqlMicros(inputs)
      const disagreements = inputs.flatMap((s, i) => (agrees(isoInstant(s), sql[i]) ? [] : [{ s, js: isoInstant(s), sql: sql[i] }]))
      expect(disagreements).toEqual([])
    }))

  it.effect("read the forms the filters document as the right instants", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const expected: Record<string, string | null> = {
        "2024-05-01": "2024-05-01T00:00:00.000Z",
        "2024-02-29": "2024-02-29T00:00:00.000Z",
        "2023-02-29": null,
        "2024-04-31": null,
        "2024-05-01T10:00": "2024-05-01T10:00:00.000Z",
        "2024-05-01T15:30:00+05:30": "2024-05-01T10:00:00.000Z",
        "2024-05-01T15:30:00+0530": "2024-05-01T10:00:00.000Z",
        "2024-05-01T15:00:00+05": "2024-05-01T10:00:00.000Z",
        "2024-05-01T02:00:00-08:00": "2024-05-01T10:00:00.000Z",
        "2024-05-01T00:30:00+01:00": "2024-04-30T23:30:00.000Z",
        "2024-05-01T10:00:00.123Z": "2024-05-01T10:00:00.123Z",
        "2024-05-01T24:00": null,
        "0999-12-31": null,
        "1714557600": null
      }
      const inputs = Object.keys(expected)
      const sql = yield* sqlMicros(inputs)
      inputs.forEach((s, i) => {
        const iso = expected[s]!
        const ms = isoInstant(s)
        expect(ms === undefined ? null : new Date(ms).toISOString(), s).toBe(iso)
        expect(sql[i] === null || sql[i] === undefined ? null : new Date(Number(BigInt(sql[i]!) / 1000n)).toISOString(), s).toBe(iso)
      })
      // Microseconds survive on both sides.
      const micro = "2024-05-01T10:00:00.000001Z"
      expect(Math.round(isoInstant(micro)! * 1000)).toBe(Date.UTC(2024, 4, 1, 10) * 1000 + 1)
      expect(yield* sqlMicros([micro])).toEqual([String(Date.UTC(2024, 4, 1, 10) * 1000 + 1)])
    }))

  it.effect("agree on generated strings of that shape (property)", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
      const pad = (n: number, width: number) => String(n).padStart(width, "0")
      const year = fc.oneof(
        fc.constantFrom("0999", "1000", "1900", "1970", "2000", "2023", "2024", "2100", "9999", "0000", "999", "10000"),
        fc.integer({ min: 0, max: 9999 }).map((y) => pad(y, 4))
      )
      const month = fc.oneof(fc.integer({ min: 0, max: 13 }).map((m) => pad(m, 2)), fc.constantFrom("1", "001"))
      const day = fc.oneof(fc.integer({ min: 0, max: 32 }).map((d) => pad(d, 2)), fc.constantFrom("28", "29", "30", "31", "1"))
      const two = (max: number) => fc.integer({ min: 0, max }).map((n) => pad(n, 2))
      const fraction = fc.integer({ min: 0, max: 8 }).chain((n) => fc.stringMatching(new RegExp(`^\\d{${n}}$`)).map((digits) => `.${digits}`))
      const zone = fc.oneof(
        fc.constantFrom("", "Z", "z", "+05", "+0530", "+05:30", "-08:00", "-0800", "+00:00", "-00", "+14:00", "+15:59", "+24:00", "+05:60", "+5:30", "+05:3", " +05:30", "UTC"),
        // Hours up to 15 here: 16 to 23 are the separate case above.
        fc.tuple(fc.constantFrom("+", "-"), fc.oneof(two(15), fc.constantFrom("24", "25", "99")), fc.constantFrom("", ":"), fc.oneof(fc.constant(""), two(61))).map(([sign, hh, colon, mm]) => `${sign}${hh}${mm === "" ? "" : colon + mm}`)
      )
      const time = fc.tuple(
        fc.constantFrom("T", " ", "t", "_"),
        two(25),
        two(61),
        fc.oneof(fc.constant(""), two(61).map((s) => `:${s}`)),
        fc.oneof(fc.constant(""), fraction),
        zone
      ).map(([sep, hh, mm, ss, frac, z]) => `${sep}${hh}:${mm}${ss === "" ? "" : ss + frac}${z}`)
      const shaped = fc.tuple(year, month, day, fc.oneof(fc.constant(""), time), fc.constantFrom("", "", "", " ", "\n"), fc.constantFrom("", "", "", " "))
        .map(([y, m, d, t, after, before]) => `${before}${y}-${m}-${d}${t}${after}`)
      // Real instants, printed as ISO with an offset, and their date-only prefixes.
      const real = fc.tuple(fc.date({ min: new Date("1000-01-01T00:00:00Z"), max: new Date("9999-12-31T00:00:00Z"), noInvalidDate: true }), fc.integer({ min: -14 * 60, max: 14 * 60 }))
        .map(([date, offset]) => {
          const local = new Date(date.getTime() + offset * 60_000).toISOString().slice(0, -1)
          const sign = offset < 0 ? "-" : "+"
          return `${local}${sign}${pad(Math.floor(Math.abs(offset) / 60), 2)}:${pad(Math.abs(offset) % 60, 2)}`
        })
      const strings = fc.oneof({ weight: 6, arbitrary: shaped }, { weight: 2, arbitrary: real }, { weight: 1, arbitrary: real.map((s) => s.slice(0, 10)) }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }) })

      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(strings, { minLength: 1, maxLength: 40 }), async (batch) => {
            const sql = await Runtime.runPromise(runtime)(sqlMicros(batch))
            batch.forEach((s, i) => expect({ s, js: isoInstant(s), sql: sql[i], agree: agrees(isoInstant(s), sql[i]) }).toMatchObject({ agree: true }))
          }),
          { numRuns: 150 }
        )
      )
    }))
})
