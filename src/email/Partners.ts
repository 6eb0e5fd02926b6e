import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { InvalidApiKey, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { sha256 } from "../crypto/secrets.ts"
import { PreparedStatements } from "../storage/PreparedStatements.ts"
import { PRODUCTION_QUOTA } from "./model.ts"

export const PARTNER_KEY_PREFIX = "pk_partner_"

export interface PartnerRow {
  readonly partnerId: string
  readonly name: string
  readonly max24HourSend: number
  readonly maxSendRate: number
  readonly productionAccess: boolean
}

const COLUMNS = "partner_id::text, name, max_24_hour_send AS max24_hour_send, max_send_rate, production_access"

const refused = (message: string) => new InvalidApiKey({ message })

const KNOWN_KEYS_MAX = 10_000
const SETTINGS_TTL_MS = 1_000

/**
 * Partners of the e-mail API and their keys (`pk_partner_` + 32 random bytes, base64url): shown
 * once by `herald admin create-partner`, stored as SHA-256 (a high-entropy key gains nothing from
 * a slow hash), looked up by hash on every request.
 */
export class Partners extends Effect.Service<Partners>()("herald/email/Partners", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const prepared = yield* PreparedStatements
    const byHash = prepared.prepare<{ partnerId: string; name: string }>(`SELECT partner_id::text, name FROM partners WHERE key_hash = $1`)

    const create = (name: string) =>
      Effect.gen(function*() {
        const key = PARTNER_KEY_PREFIX + randomBytes(32).toString("base64url")
        const [row] = yield* sql<{ partnerId: string }>`
          INSERT INTO partners (name, key_hash, key_last_four) VALUES (${name}, ${sha256(key)}, ${key.slice(-4)})
          RETURNING partner_id::text`
        return { partner_id: row!.partnerId, name, api_key: key }
      })

    /** The partner of a bearer credential; anything else of Herald's (a JWT, rcs_pk_live_, sk_live_) is not one. */
    // Partner keys are never revoked or changed: a key once found stays its partner's. Unknown keys
    // are never kept, so guessing cannot fill the map.
    const known = new Map<string, { readonly partnerId: string; readonly name: string }>()

    const authenticate = (credential: string) =>
      Effect.gen(function*() {
        if (!credential.startsWith(PARTNER_KEY_PREFIX)) {
          return yield* refused("not a partner key: send Authorization: Bearer pk_partner_…")
        }
        const hash = sha256(credential)
        const hit = known.get(hash)
        if (hit !== undefined) return hit
        const [row] = yield* byHash([hash]).pipe(Effect.orDie)
        if (row === undefined) return yield* refused("unknown partner key")
        if (known.size >= KNOWN_KEYS_MAX) known.clear()
        known.set(hash, row)
        return row
      })

    // A send reads its partner's quotas and sandbox state: at most once a second per node, so an
    // operator's grant or quota change applies within a second.
    const recent = new Map<string, { readonly row: PartnerRow; readonly at: number }>()
    const current = (partnerId: string) =>
      Effect.suspend(() => {
        const hit = recent.get(partnerId)
        if (hit !== undefined && Date.now() - hit.at < SETTINGS_TTL_MS) return Effect.succeed(hit.row)
        return Effect.tap(find(partnerId), (row) =>
          Effect.sync(() => {
            if (recent.size >= KNOWN_KEYS_MAX) recent.clear()
            recent.set(partnerId, { row, at: Date.now() })
          }))
      })

    const find = (partnerId: string) =>
      Effect.gen(function*() {
        if (!isUuid(partnerId)) return yield* new NotFound({ message: `no partner ${partnerId}` })
        const [row] = yield* sql<PartnerRow>`SELECT ${sql.literal(COLUMNS)} FROM partners WHERE partner_id = ${partnerId}::uuid`.pipe(Effect.orDie)
        if (row === undefined) return yield* new NotFound({ message: `no partner ${partnerId}` })
        return row
      })

    /** `herald admin email-quota`: either limit, or both. */
    const setQuota = (partnerId: string, quota: { readonly daily?: number | undefined; readonly rate?: number | undefined }) =>
      Effect.gen(function*() {
        yield* find(partnerId)
        const [row] = yield* sql<PartnerRow>`
          UPDATE partners SET max_24_hour_send = COALESCE(${quota.daily ?? null}::int, max_24_hour_send),
                              max_send_rate = COALESCE(${quota.rate ?? null}::int, max_send_rate)
          WHERE partner_id = ${partnerId}::uuid RETURNING ${sql.literal(COLUMNS)}`.pipe(Effect.orDie)
        return row!
      })

    /**
     * `herald admin email-production-access PARTNER grant|deny`: settles the latest PENDING
     * request; a grant without one records a GRANTED request. A grant lifts the sandbox and raises
     * the quotas to production's (never lowering what an operator set higher).
     */
    const decideProductionAccess = (partnerId: string, decision: "grant" | "deny", reason: string | undefined) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* find(partnerId)
        const status = decision === "grant" ? "GRANTED" : "DENIED"
        const [pending] = yield* sql<{ requestId: string }>`
          SELECT request_id::text FROM email_production_access
          WHERE partner_id = ${partnerId}::uuid AND status = 'PENDING' ORDER BY created_at DESC LIMIT 1 FOR UPDATE`
        if (pending !== undefined) {
          yield* sql`UPDATE email_production_access SET status = ${status}, reason = ${reason ?? null}, decided_at = now() WHERE request_id = ${pending.requestId}::uuid`
        } else if (decision === "grant") {
          yield* sql`
            INSERT INTO email_production_access (partner_id, mail_type, website_url, use_case_description, status, reason, decided_at)
            VALUES (${partnerId}::uuid, 'TRANSACTIONAL', '', 'granted by the operator without a request', 'GRANTED', ${reason ?? null}, now())`
        } else {
          return yield* new NotFound({ message: "no pending production access request to deny" })
        }
        if (decision === "grant") {
          yield* sql`
            UPDATE partners SET production_access = true,
              max_24_hour_send = GREATEST(max_24_hour_send, ${PRODUCTION_QUOTA.max24HourSend}),
              max_send_rate = GREATEST(max_send_rate, ${PRODUCTION_QUOTA.maxSendRate})
            WHERE partner_id = ${partnerId}::uuid`
        }
        return { partner_id: partnerId, request_id: pending?.requestId ?? null, status }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * `herald admin email-identity-verify`: an operator's check of a domain (its DKIM records
     * published; Herald does not look up DNS) or of an address.
     */
    const verifyIdentity = (identityId: string) =>
      Effect.gen(function*() {
        const [row] = isUuid(identityId)
          ? yield* sql<{ identityId: string; partnerId: string; identity: string; type: string; status: string }>`
              UPDATE email_identities SET status = 'VERIFIED', verified_at = now(), verify_token_hash = NULL
              WHERE identity_id = ${identityId}::uuid RETURNING identity_id::text, partner_id::text, identity, type, status`.pipe(Effect.orDie)
          : []
        if (row === undefined) return yield* new NotFound({ message: `no identity ${identityId}` })
        return { id: row.identityId, partner_id: row.partnerId, identity: row.identity, type: row.type, status: row.status }
      })

    return { create, authenticate, find, current, setQuota, decideProductionAccess, verifyIdentity } as const
  }),
  dependencies: [PreparedStatements.Default]
}) {}
