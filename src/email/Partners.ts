import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { InvalidApiKey, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { sha256 } from "../crypto/secrets.ts"
import { IdentitiesRepo } from "./IdentitiesRepo.ts"
import { type PartnerRow, PartnersRepo } from "./PartnersRepo.ts"
import { ProductionAccessRepo } from "./ProductionAccessRepo.ts"

export type { PartnerRow } from "./PartnersRepo.ts"

export const PARTNER_KEY_PREFIX = "pk_partner_"

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
    const repo = yield* PartnersRepo
    const accessRepo = yield* ProductionAccessRepo
    const identitiesRepo = yield* IdentitiesRepo

    const create = (name: string) =>
      Effect.gen(function*() {
        const key = PARTNER_KEY_PREFIX + randomBytes(32).toString("base64url")
        const partnerId = yield* repo.insert(name, sha256(key), key.slice(-4))
        return { partner_id: partnerId, name, api_key: key }
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
        const row = yield* repo.findByKeyHash(hash)
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
        const row = yield* repo.findById(partnerId)
        if (row === undefined) return yield* new NotFound({ message: `no partner ${partnerId}` })
        return row
      })

    /** `herald admin email-quota`: either limit, or both. */
    const setQuota = (partnerId: string, quota: { readonly daily?: number | undefined; readonly rate?: number | undefined }) =>
      Effect.gen(function*() {
        yield* find(partnerId)
        return yield* repo.setQuota(partnerId, quota)
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
        const pending = yield* accessRepo.lockLatestPending(partnerId)
        if (pending !== undefined) {
          yield* accessRepo.decide(pending, status, reason)
        } else if (decision === "grant") {
          yield* accessRepo.insertGranted(partnerId, reason)
        } else {
          return yield* new NotFound({ message: "no pending production access request to deny" })
        }
        if (decision === "grant") yield* repo.grantProduction(partnerId)
        return { partner_id: partnerId, request_id: pending ?? null, status }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * `herald admin email-identity-verify`: an operator's check of a domain (its DKIM records
     * published; Herald does not look up DNS) or of an address.
     */
    const verifyIdentity = (identityId: string) =>
      Effect.gen(function*() {
        const row = yield* identitiesRepo.verifyById(identityId)
        if (row === undefined) return yield* new NotFound({ message: `no identity ${identityId}` })
        return { id: row.identityId, partner_id: row.partnerId, identity: row.identity, type: row.type, status: row.status }
      })

    return { create, authenticate, find, current, setQuota, decideProductionAccess, verifyIdentity } as const
  }),
  dependencies: [PartnersRepo.Default, ProductionAccessRepo.Default, IdentitiesRepo.Default]
}) {}
