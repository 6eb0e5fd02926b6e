import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { generateKeyPair, randomBytes } from "node:crypto"
import { promisify } from "node:util"
import { AppConfig } from "../config/AppConfig.ts"
import { Conflict, InvalidRequest, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { type DkimKey, EmailRelay } from "../gateway/EmailRelay.ts"
import { SecretBox } from "../crypto/SecretBox.ts"
import { sha256 } from "../crypto/secrets.ts"
import type { PagePosition } from "../storage/pageCursor.ts"
import { isUniqueViolation } from "../storage/sqlState.ts"
import { domainOf, parseAddress, parseDomain } from "./addresses.ts"
import { CursorPages } from "./cursorPage.ts"
import { toMillis } from "./model.ts"

const generateRsa = promisify(generateKeyPair)

/** Herald's own address for the verification mail. */
export const VERIFICATION_FROM = "no-reply@herald.local"

interface IdentityRow {
  readonly identityId: string
  readonly identity: string
  readonly type: "EMAIL_ADDRESS" | "DOMAIN"
  readonly status: "PENDING" | "VERIFIED" | "FAILED"
  readonly dkimTokens: ReadonlyArray<string> | null
  readonly createdAt: string
}

const COLUMNS = `identity_id::text, identity, type, status, dkim_tokens,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at`

const present = (row: IdentityRow) => ({
  id: row.identityId,
  identity: row.identity,
  type: row.type,
  status: row.status,
  ...(row.dkimTokens === null ? {} : { dkim_tokens: row.dkimTokens }),
  created_at: toMillis(row.createdAt)
})

const dkimToken = () => randomBytes(20).toString("hex").slice(0, 32)

/**
 * Identities a partner sends from (SES's): an address, verified by the link Herald mails to it,
 * or a domain, which gets three DKIM tokens to publish (the first is the selector Herald signs
 * with) and is verified by Herald's operator (`herald admin email-identity-verify`), since Herald
 * does not look up DNS. A verified domain covers every address at it.
 */
export class Identities extends Effect.Service<Identities>()("herald/email/Identities", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const box = yield* SecretBox
    const pages = yield* CursorPages
    const publicUrl = config.publicUrl._tag === "Some" ? config.publicUrl.value : `http://127.0.0.1:${config.port}`

    const byId = (partnerId: string, id: string) =>
      Effect.gen(function*() {
        const [row] = isUuid(id)
          ? yield* sql<IdentityRow>`SELECT ${sql.literal(COLUMNS)} FROM email_identities WHERE identity_id = ${id}::uuid AND partner_id = ${partnerId}::uuid`
          : []
        if (row === undefined) return yield* new NotFound({ message: `no identity ${id}` })
        return row
      })

    /** Mails the link; an address the relay refuses for good cannot be verified (FAILED). */
    const mailVerification = (identityId: string, address: string, token: string) =>
      Effect.gen(function*() {
        const relay = yield* EmailRelay
        const link = `${publicUrl}/api/v1/partner/email/verify?token=${token}`
        const outcome = yield* relay.send({
          messageId: `verify-${identityId}`,
          from: VERIFICATION_FROM,
          recipient: address,
          to: [address],
          cc: [],
          replyTo: [],
          subject: "Verify your e-mail address for sending",
          text: `Someone asked to send e-mail from ${address} through Herald.\n\nTo allow it, open this link:\n${link}\n\nIf it was not you, ignore this message.`
        })
        if (outcome._tag === "Bounced" || outcome._tag === "Rejected") {
          yield* sql`UPDATE email_identities SET status = 'FAILED', verify_token_hash = NULL WHERE identity_id = ${identityId}::uuid`
        }
        if (outcome._tag !== "Accepted") yield* Effect.logWarning("verification mail not accepted", { identity_id: identityId, outcome: outcome._tag, response: outcome.response })
      })

    const create = (partnerId: string, raw: string) =>
      Effect.gen(function*() {
        const isAddress = raw.includes("@")
        const identity = isAddress ? parseAddress(raw) : parseDomain(raw)
        if (identity === undefined) {
          return yield* InvalidRequest.single("identity", isAddress ? "is not an e-mail address" : "is not a domain name (or an e-mail address)")
        }
        const token = isAddress ? randomBytes(24).toString("base64url") : undefined
        let dkim: { tokens: ReadonlyArray<string>; sealedKey: string } | undefined
        if (!isAddress) {
          const { privateKey } = yield* Effect.promise(() =>
            generateRsa("rsa", { modulusLength: 2048, publicKeyEncoding: { type: "spki", format: "pem" }, privateKeyEncoding: { type: "pkcs8", format: "pem" } }))
          dkim = { tokens: [dkimToken(), dkimToken(), dkimToken()], sealedKey: box.seal(privateKey) }
        }
        const [row] = yield* sql<IdentityRow>`
          INSERT INTO email_identities (partner_id, identity, type, verify_token_hash, dkim_tokens, dkim_private_key)
          VALUES (${partnerId}::uuid, ${identity}, ${isAddress ? "EMAIL_ADDRESS" : "DOMAIN"}, ${token === undefined ? null : sha256(token)},
                  ${dkim?.tokens ?? null}, ${dkim?.sealedKey ?? null})
          RETURNING ${sql.literal(COLUMNS)}`.pipe(
          Effect.catchIf(isUniqueViolation, () => new Conflict({ key: "identity", message: `${identity} is already an identity of this partner` }))
        )
        if (token !== undefined) yield* mailVerification(row!.identityId, identity, token)
        return { success: true as const, ...present(row!) }
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const list = (partnerId: string, query: { readonly limit?: number | undefined; readonly next_cursor?: string | undefined }) =>
      Effect.map(
        pages.page({ list: "identities", partnerId }, query, (after: PagePosition | undefined, take: number) =>
          sql<IdentityRow>`
            SELECT ${sql.literal(COLUMNS)} FROM email_identities t
            WHERE ${sql.and([
            sql`partner_id = ${partnerId}::uuid`,
            ...(after === undefined ? [] : [sql`(created_at, identity_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`])
          ])}
            ORDER BY t.created_at DESC, t.identity_id DESC LIMIT ${take}`.pipe(Effect.orDie), (row) => ({ createdAt: row.createdAt, id: row.identityId })),
        ({ rows, ...page }) => ({ success: true as const, identities: rows.map(present), ...page })
      )

    const get = (partnerId: string, id: string) => Effect.map(byId(partnerId, id), (row) => ({ success: true as const, ...present(row) })).pipe(Effect.catchTag("SqlError", Effect.die))

    const remove = (partnerId: string, id: string) =>
      Effect.gen(function*() {
        yield* byId(partnerId, id)
        yield* sql`DELETE FROM email_identities WHERE identity_id = ${id}::uuid`
        return { success: true as const }
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /** The link of the verification mail (one use). */
    const verify = (token: string) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ identity: string }>`
          UPDATE email_identities SET status = 'VERIFIED', verified_at = now(), verify_token_hash = NULL
          WHERE verify_token_hash = ${sha256(token)} AND status = 'PENDING' RETURNING identity`
        if (row === undefined) return yield* new NotFound({ message: "this verification link is unknown or was already used" })
        return { success: true as const, identity: row.identity, status: "VERIFIED" as const }
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * The verified identities among these addresses: an address counts when it is verified itself
     * or its domain is.
     */
    const verifiedAmong = (partnerId: string, addresses: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const names = [...new Set([...addresses, ...addresses.map(domainOf)])]
        const rows = yield* sql<{ identity: string }>`
          SELECT identity FROM email_identities
          WHERE partner_id = ${partnerId}::uuid AND status = 'VERIFIED' AND identity = ANY(${names}::text[])`.pipe(Effect.orDie)
        const verified = new Set(rows.map((row) => row.identity))
        return new Set(addresses.filter((address) => verified.has(address) || verified.has(domainOf(address))))
      })

    /** The signing keys of these sending domains (verified ones with keys that open). */
    const dkimKeys = (partnerId: string, domains: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ identity: string; dkimTokens: ReadonlyArray<string>; dkimPrivateKey: string }>`
          SELECT identity, dkim_tokens, dkim_private_key FROM email_identities
          WHERE partner_id = ${partnerId}::uuid AND type = 'DOMAIN' AND status = 'VERIFIED'
            AND dkim_private_key IS NOT NULL AND identity = ANY(${domains}::text[])`.pipe(Effect.orDie)
        const keys = new Map<string, DkimKey>()
        for (const row of rows) {
          const privateKey = box.open(row.dkimPrivateKey)
          if (privateKey !== undefined) keys.set(row.identity, { domainName: row.identity, keySelector: row.dkimTokens[0]!, privateKey })
        }
        return keys
      })

    return { create, list, get, remove, verify, verifiedAmong, dkimKeys } as const
  }),
  dependencies: [SecretBox.Default, CursorPages.Default]
}) {}
