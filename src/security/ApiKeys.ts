import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { API_KEY_PREFIX, API_KEY_ROUTES, mayWrite, type Scope, scopeSatisfied } from "../domain/access.ts"
import { ApiKeyEndpointNotAllowed, InvalidApiKey, InvalidRequest, MissingScope, NotFound } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import { type ApiKeyRow, ApiKeysRepo, type KeyOwner } from "./ApiKeysRepo.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { makeReadCache } from "../storage/ReadCache.ts"
import { sha256 } from "../crypto/secrets.ts"

const invalidKey = InvalidApiKey.because("no key of this server matches: it is mistyped, revoked or was never issued")

/** A key just made: the raw key, shown this once, and its row. */
export interface CreatedApiKey {
  readonly rawKey: string
  readonly key: ApiKeyRow
}

export const isApiKey = (credential: string) => credential.startsWith(API_KEY_PREFIX)

const requireOwner = mayWrite.manageApiKeys

/**
 * API keys: `rcs_pk_live_` + 32 random bytes (base64url), shown once; only the SHA-256 and the last
 * four characters are stored. A key reaches only GET on the allow-listed paths, with a scope.
 */
export class ApiKeys extends Effect.Service<ApiKeys>()("herald/ApiKeys", {
  scoped: Effect.gen(function*() {
    const repo = yield* ApiKeysRepo
    const feed = yield* ChangeFeed
    // Every request with a key looks it up: kept in memory, dropped by the change feed the moment
    // the key (or its account) changes, so revocation still takes effect on the next request.
    const owners = yield* makeReadCache<KeyOwner>({ tables: ["api_keys", "accounts"], capacity: 100_000 })
    const findOwner = (hash: string) =>
      owners.get(hash, () => Effect.map(repo.findByHash(hash), (owner) => owner && { accountId: owner.accountId, value: owner }))
    // Which keys this node marked used, and when: the SQL condition holds across nodes; this only
    // spares a write per request.
    const touched = new Map<string, number>()

    const create = (principal: Principal, input: { name: string; scopes: ReadonlyArray<Scope>; expiresAt: Date | null }) =>
      Effect.gen(function*() {
        yield* requireOwner(principal)
        if (input.expiresAt !== null && input.expiresAt.getTime() <= Date.now()) {
          return yield* InvalidRequest.single("expires_at", "must be in the future")
        }
        const raw = API_KEY_PREFIX + randomBytes(32).toString("base64url")
        const row = yield* repo.insert({
          accountId: principal.accountId,
          name: input.name,
          keyHash: sha256(raw),
          lastFour: raw.slice(-4),
          scopes: [...new Set(input.scopes)],
          createdBy: principal.email,
          expiresAt: input.expiresAt
        })
        return { rawKey: raw, key: row } satisfies CreatedApiKey
      })

    const list = (principal: Principal) =>
      Effect.gen(function*() {
        yield* requireOwner(principal)
        const rows = yield* repo.list(principal.accountId)
        return rows
      })

    const update = (principal: Principal, keyId: string, changes: { name?: string; expiresAt?: Date | null }) =>
      Effect.gen(function*() {
        yield* requireOwner(principal)
        if (changes.expiresAt instanceof Date && changes.expiresAt.getTime() <= Date.now()) {
          return yield* InvalidRequest.single("expires_at", "must be in the future")
        }
        const row = yield* repo.update(principal.accountId, keyId, changes)
        if (row === undefined) return yield* new NotFound({ message: `no active API key ${keyId}` })
        yield* feed.committed("api_keys", principal.accountId)
        return row
      })

    const revoke = (principal: Principal, keyId: string) =>
      Effect.gen(function*() {
        yield* requireOwner(principal)
        if (!(yield* repo.revoke(principal.accountId, keyId))) return yield* new NotFound({ message: `no API key ${keyId}` })
        yield* feed.committed("api_keys", principal.accountId)
      })

    /**
     * The principal of a key on `method route`: unknown, revoked or expired → 401; a method or
     * path keys may not reach → 403 api_key_endpoint_not_allowed; the path's scope missing → 403
     * missing_scope. Checked against the database on every request, so revocation is immediate.
     */
    const authenticate = (raw: string, method: string, route: string) =>
      Effect.gen(function*() {
        const owner = yield* findOwner(sha256(raw))
        if (owner === undefined) return yield* invalidKey
        if (owner.expiresAt !== null && new Date(owner.expiresAt).getTime() <= Date.now()) {
          return yield* InvalidApiKey.because(`the key expired at ${new Date(owner.expiresAt).toISOString()}`)
        }
        const required = API_KEY_ROUTES.get(route)
        if (method !== "GET" || required === undefined) {
          return yield* new ApiKeyEndpointNotAllowed({ message: `API keys may not call ${method} ${route}` })
        }
        if (required !== null && !scopeSatisfied(owner.scopes, required)) {
          return yield* new MissingScope({ message: `this API key lacks the scope ${required}` })
        }
        const last = touched.get(owner.keyId) ?? 0
        if (Date.now() - last >= 60_000) {
          touched.set(owner.keyId, Date.now())
          yield* repo.touch(owner.keyId)
        }
        return {
          accountId: owner.accountId,
          accountLabel: owner.accountLabel,
          ownerUserId: owner.ownerUserId,
          personUserId: owner.ownerUserId,
          email: owner.ownerEmail,
          memberId: "",
          role: "viewer",
          bots: ["*"],
          credential: { kind: "api_key", keyId: owner.keyId, scopes: owner.scopes }
        } satisfies Principal
      })

    return { create, list, update, revoke, authenticate } as const
  }),
  dependencies: [ApiKeysRepo.Default, ChangeFeed.Default]
}) {}
