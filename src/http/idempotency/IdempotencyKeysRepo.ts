import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"

/** A key's row: its request's fingerprint and, once done, its answer (sealed since migration 0033). */
export interface StoredRow {
  readonly fingerprint: string
  readonly state: "running" | "done"
  readonly status: number | null
  readonly contentType: string | null
  readonly body: Uint8Array | null
  /** False only for answers stored before migration 0033 (or by a node not upgraded yet). */
  readonly sealed: boolean
}

/**
 * The one writer of `idempotency_keys` (Idempotency.ts says what the rows mean). Claims and reads
 * turn SqlError into a defect; the writes that keep an answer leave it typed, because the service
 * retries them while the database is away (an answer that went out must be kept).
 */
export class IdempotencyKeysRepo extends Effect.Service<IdempotencyKeysRepo>()("herald/IdempotencyKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Claims the key: a new row, or one whose `ttl` is over, or a running one whose node stopped
     * renewing its `lease` (for the same request only). True when this request now owns it.
     */
    const claim = (scope: string, key: string, fingerprint: string, lease: Duration.Duration, ttl: Duration.Duration) =>
      Effect.map(
        sql<{ claimed: boolean }>`
          INSERT INTO idempotency_keys (scope, key, fingerprint, state, lease_until, expires_at)
          VALUES (${scope}, ${key}, ${fingerprint}, 'running', now() + ${interval(lease)}::interval, now() + ${interval(ttl)}::interval)
          ON CONFLICT (scope, key) DO UPDATE SET
            fingerprint = EXCLUDED.fingerprint, state = 'running', lease_until = EXCLUDED.lease_until,
            status = NULL, content_type = NULL, body = NULL, sealed = false, created_at = now(), expires_at = EXCLUDED.expires_at
          WHERE idempotency_keys.expires_at <= now()
             OR (idempotency_keys.state = 'running' AND idempotency_keys.lease_until <= now()
                 AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
          RETURNING true AS claimed`,
        (rows) => rows.length > 0
      ).pipe(Effect.orDie)

    const read = (scope: string, key: string) =>
      Effect.map(
        sql<StoredRow>`
          SELECT fingerprint, state, status, content_type, body, sealed FROM idempotency_keys
          WHERE scope = ${scope} AND key = ${key} AND expires_at > now()`,
        (rows) => rows[0]
      ).pipe(Effect.orDie)

    const renew = (scope: string, key: string, lease: Duration.Duration) =>
      sql`UPDATE idempotency_keys SET lease_until = now() + ${interval(lease)}::interval
          WHERE scope = ${scope} AND key = ${key} AND state = 'running'`

    /** A streamed request's fingerprint, known once its body was read to the end. */
    const setFingerprint = (scope: string, key: string, fingerprint: string) =>
      sql`UPDATE idempotency_keys SET fingerprint = ${fingerprint} WHERE scope = ${scope} AND key = ${key} AND state = 'running'`

    /** Keeps the answer (its body already sealed). */
    const settle = (scope: string, key: string, answer: { readonly status: number; readonly contentType: string | null; readonly sealedBody: Uint8Array }) =>
      sql`UPDATE idempotency_keys SET state = 'done', status = ${answer.status}, content_type = ${answer.contentType}, body = ${answer.sealedBody}, sealed = true
          WHERE scope = ${scope} AND key = ${key} AND state = 'running'`

    /** Gives the key up: the request failed or its answer is not kept. */
    const release = (scope: string, key: string) =>
      sql`DELETE FROM idempotency_keys WHERE scope = ${scope} AND key = ${key} AND state = 'running'`

    /** Rows past their 24 hours, removed in bounded batches. */
    const sweep = sql`
      DELETE FROM idempotency_keys WHERE ctid IN (
        SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT 5000)`

    return { claim, read, renew, setFingerprint, settle, release, sweep } as const
  })
}) {}

const interval = (duration: Duration.Duration) => `${Duration.toMillis(duration)} milliseconds`
