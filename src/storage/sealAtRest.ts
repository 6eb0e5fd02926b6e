import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { isSealed, makeSecretBox, SEALED_PREFIX } from "../crypto/SecretBox.ts"

/**
 * Every column holding a secret Herald must read back, sealed with SecretBox (docs/security.md,
 * Secrets at rest). A column added here is sealed where it was plain and re-sealed under a new
 * HERALD_SECRETS_KEY at every node's start.
 */
export const SEALED_COLUMNS = [
  { table: "signing_keys", key: "kid", column: "private_jwk" },
  { table: "webhooks", key: "webhook_id", column: "secret" },
  { table: "webhooks", key: "webhook_id", column: "previous_secret" },
  { table: "users", key: "user_id", column: "totp_secret" },
  { table: "capi_configs", key: "account_id", column: "access_token_sealed" },
  { table: "email_identities", key: "identity_id", column: "dkim_private_key" },
  { table: "console_sessions", key: "session_hash", column: "sealed_token" }
] as const

type SealedColumn = (typeof SEALED_COLUMNS)[number]

/** Rows read per statement: a large table is walked in pages, never loaded whole. */
const PAGE = 500

export class SecretsKeyMismatch extends Schema.TaggedError<SecretsKeyMismatch>()("SecretsKeyMismatch", {
  message: Schema.String
}) {}

export interface SealReport {
  /** Plain values found and sealed (rows written before secrets were sealed, or by an older node). */
  readonly sealed: number
  /** Values sealed under HERALD_SECRETS_KEY_PREVIOUS, sealed again under HERALD_SECRETS_KEY. */
  readonly resealed: number
  /** Sealed values neither key opens (left as they are). */
  readonly unreadable: number
}

interface Row {
  readonly id: string | Uint8Array
  readonly value: string
}

/**
 * Seals the plain values of the sealed columns and, while HERALD_SECRETS_KEY is being rotated,
 * re-seals under it what HERALD_SECRETS_KEY_PREVIOUS sealed. Runs after the migrations on every
 * start (a migration has no key). Idempotent and safe beside other nodes doing the same: each row
 * is written only if it still holds the value read (a row another node sealed meanwhile is left).
 *
 * First, a sealed value of each column must open: a node given the wrong key refuses to start
 * rather than seal new values under a key the other nodes do not have.
 */
export const sealAtRest = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const box = makeSecretBox(config.secretsKey, config.secretsKeyPrevious)
  const sealedValue = sql`LIKE ${`${SEALED_PREFIX}%`}`

  /** Writes `sealed` in place of the value read, unless the row changed since: whether it did. */
  const replace = (c: SealedColumn, row: Row, sealed: string) =>
    Effect.map(
      sql`UPDATE ${sql(c.table)} SET ${sql(c.column)} = ${sealed} WHERE ${sql(c.key)} = ${row.id} AND ${sql(c.column)} = ${row.value} RETURNING 1`,
      (rows) => rows.length
    )

  for (const c of SEALED_COLUMNS) {
    const [sample] = yield* sql<Row>`SELECT ${sql(c.column)} AS value FROM ${sql(c.table)} WHERE ${sql(c.column)} ${sealedValue} LIMIT 1`
    if (sample !== undefined && box.unseal(sample.value) === undefined) {
      return yield* new SecretsKeyMismatch({
        message: `HERALD_SECRETS_KEY does not open the secrets sealed in ${c.table}.${c.column}: set it to the key they were sealed with ` +
          "(while rotating, the new key in HERALD_SECRETS_KEY and the old one in HERALD_SECRETS_KEY_PREVIOUS)"
      })
    }
  }

  /** The column's plain values, sealed. */
  const sealPlain = (c: SealedColumn) =>
    Effect.gen(function*() {
      let sealed = 0
      // Each page's rows leave the filter once sealed; a page that seals nothing ends the loop (the
      // rest were sealed by another node, or keep being written plain by a node older than this one).
      for (;;) {
        const rows = yield* sql<Row>`
          SELECT ${sql(c.key)} AS id, ${sql(c.column)} AS value FROM ${sql(c.table)}
          WHERE ${sql(c.column)} IS NOT NULL AND NOT ${sql(c.column)} ${sealedValue} LIMIT ${PAGE}`
        let done = 0
        for (const row of rows) done += yield* replace(c, row, box.seal(row.value))
        sealed += done
        if (rows.length < PAGE || done === 0) return sealed
      }
    })

  /** The column's values the previous key opens, sealed again under the current one: a walk by primary key. */
  const resealPrevious = (c: SealedColumn) =>
    Effect.gen(function*() {
      let resealed = 0
      let unreadable = 0
      let after: Row["id"] | undefined = undefined
      for (;;) {
        const rows: ReadonlyArray<Row> = yield* sql<Row>`
          SELECT ${sql(c.key)} AS id, ${sql(c.column)} AS value FROM ${sql(c.table)}
          WHERE ${sql(c.column)} ${sealedValue} ${after === undefined ? sql`` : sql`AND ${sql(c.key)} > ${after}`}
          ORDER BY ${sql(c.key)} LIMIT ${PAGE}`
        for (const row of rows) {
          const opened = isSealed(row.value) ? box.unseal(row.value) : undefined
          if (opened === undefined) unreadable++
          else if (!opened.current) resealed += yield* replace(c, row, box.seal(opened.plain))
        }
        if (rows.length < PAGE) return { resealed, unreadable }
        after = rows[rows.length - 1]!.id
      }
    })

  const report = { sealed: 0, resealed: 0, unreadable: 0 }
  for (const c of SEALED_COLUMNS) {
    report.sealed += yield* sealPlain(c)
    if (box.rotating) {
      const { resealed, unreadable } = yield* resealPrevious(c)
      report.resealed += resealed
      report.unreadable += unreadable
    }
  }
  if (report.sealed > 0 || report.resealed > 0) yield* Effect.logInfo("secrets sealed at rest", report)
  if (report.unreadable > 0) {
    yield* Effect.logWarning("sealed secrets that neither HERALD_SECRETS_KEY nor HERALD_SECRETS_KEY_PREVIOUS opens were left as they are", report)
  }
  return report as SealReport
}).pipe(Effect.withSpan("Storage.sealAtRest"))
