import { Effect } from "effect"
import { generateKeyPair, randomBytes } from "node:crypto"
import { promisify } from "node:util"
import { AppConfig } from "../config/AppConfig.ts"
import { Conflict, InvalidRequest, NotFound } from "../domain/errors.ts"
import { EmailRelay } from "../gateway/EmailRelay.ts"
import type { DkimKey } from "../gateway/mail.ts"
import { SecretBox } from "../crypto/SecretBox.ts"
import { sha256 } from "../crypto/secrets.ts"
import type { PagePosition } from "../storage/pageCursor.ts"
import { domainOf, parseAddress, parseDomain } from "./addresses.ts"
import { CursorPages } from "./cursorPage.ts"
import { IdentitiesRepo } from "./IdentitiesRepo.ts"

const generateRsa = promisify(generateKeyPair)

/** Herald's own address for the verification mail. */
export const VERIFICATION_FROM = "no-reply@herald.local"

const dkimToken = () => randomBytes(20).toString("hex").slice(0, 32)

/**
 * Identities a partner sends from (SES's): an address, verified by the link Herald mails to it,
 * or a domain, which gets three DKIM tokens to publish (the first is the selector Herald signs
 * with) and is verified by Herald's operator (`herald admin email-identity-verify`), since Herald
 * does not look up DNS. A verified domain covers every address at it.
 */
export class Identities extends Effect.Service<Identities>()("herald/email/Identities", {
  effect: Effect.gen(function*() {
    const repo = yield* IdentitiesRepo
    const config = yield* AppConfig
    const box = yield* SecretBox
    const pages = yield* CursorPages
    const publicUrl = config.publicUrl._tag === "Some" ? config.publicUrl.value : `http://127.0.0.1:${config.port}`

    const byId = (partnerId: string, id: string) =>
      Effect.gen(function*() {
        const row = yield* repo.findById(partnerId, id)
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
          yield* repo.markFailed(identityId)
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
        const row = yield* repo.insert({
          partnerId,
          identity,
          type: isAddress ? "EMAIL_ADDRESS" : "DOMAIN",
          verifyTokenHash: token === undefined ? null : sha256(token),
          dkimTokens: dkim?.tokens ?? null,
          dkimPrivateKey: dkim?.sealedKey ?? null
        })
        if (row === undefined) return yield* new Conflict({ key: "identity", message: `${identity} is already an identity of this partner` })
        if (token !== undefined) yield* mailVerification(row.identityId, identity, token)
        return row
      })

    const list = (partnerId: string, query: { readonly limit?: number | undefined; readonly next_cursor?: string | undefined }) =>
      pages.page({ list: "identities", partnerId }, query, (after: PagePosition | undefined, take: number) => repo.page(partnerId, after, take), (row) => ({
        createdAt: row.createdAt,
        id: row.identityId
      }))

    const get = (partnerId: string, id: string) => byId(partnerId, id)

    const remove = (partnerId: string, id: string) =>
      Effect.gen(function*() {
        yield* byId(partnerId, id)
        yield* repo.remove(id)
      })

    /** The link of the verification mail (one use). */
    const verify = (token: string) =>
      Effect.gen(function*() {
        const identity = yield* repo.verifyByTokenHash(sha256(token))
        if (identity === undefined) return yield* new NotFound({ message: "this verification link is unknown or was already used" })
        return identity
      })

    /**
     * The verified identities among these addresses: an address counts when it is verified itself
     * or its domain is.
     */
    const verifiedAmong = (partnerId: string, addresses: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const names = [...new Set([...addresses, ...addresses.map(domainOf)])]
        const verified = new Set(yield* repo.verifiedNames(partnerId, names))
        return new Set(addresses.filter((address) => verified.has(address) || verified.has(domainOf(address))))
      })

    /** The signing keys of these sending domains (verified ones with keys that open). */
    const dkimKeys = (partnerId: string, domains: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const rows = yield* repo.dkimRows(partnerId, domains)
        const keys = new Map<string, DkimKey>()
        for (const row of rows) {
          const privateKey = box.open(row.dkimPrivateKey)
          if (privateKey !== undefined) keys.set(row.identity, { domainName: row.identity, keySelector: row.dkimTokens[0]!, privateKey })
        }
        return keys
      })

    return { create, list, get, remove, verify, verifiedAmong, dkimKeys } as const
  }),
  dependencies: [IdentitiesRepo.Default, SecretBox.Default, CursorPages.Default]
}) {}
