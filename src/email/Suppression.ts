import { Effect } from "effect"
import { InvalidRequest, NotFound } from "../domain/errors.ts"
import type { PagePosition } from "../storage/pageCursor.ts"
import { parseAddress } from "./addresses.ts"
import { CursorPages } from "./cursorPage.ts"
import { SUPPRESSION_REASONS, type SuppressionReason, SuppressionRepo } from "./SuppressionRepo.ts"

export { SUPPRESSION_REASONS, type SuppressionReason } from "./SuppressionRepo.ts"

interface PageQuery {
  readonly limit?: number | undefined
  readonly next_cursor?: string | undefined
}

const notFound = (email: string) => new NotFound({ message: `${email} is not on the suppression list` })

/**
 * The partner's suppression list (SES v2's account-level list): addresses mail is never relayed
 * to (the send records a SUPPRESSED event instead). Hard bounces and complaints add rows
 * themselves; a partner adds (MANUAL by default) and removes them here. Addresses are stored as
 * `parseAddress` normalises them (lower case), so the list matches without case.
 */
export class Suppression extends Effect.Service<Suppression>()("herald/email/Suppression", {
  effect: Effect.gen(function*() {
    const repo = yield* SuppressionRepo
    const pages = yield* CursorPages

    /** Newest first. */
    const list = Effect.fn("Suppression.list")(function*(partnerId: string, query: PageQuery) {
      return yield* pages.page(
        { list: "suppression", partnerId },
        query,
        (after: PagePosition | undefined, take: number) => repo.page(partnerId, after, take),
        (row) => ({ createdAt: row.position, id: row.suppressionId })
      )
    })

    /** An address that is not one cannot be on the list: 404, like any address that is not. */
    const get = Effect.fn("Suppression.get")(function*(partnerId: string, email: string) {
      const address = parseAddress(email)
      const row = address === undefined ? undefined : yield* repo.find(partnerId, address)
      if (row === undefined) return yield* notFound(address ?? email)
      return row
    })

    /**
     * SES's PutSuppressedDestination: adds the address, or gives a listed one the new reason (it
     * keeps its created_at, so its place in the list and every cursor given out stay put).
     */
    const put = Effect.fn("Suppression.put")(function*(partnerId: string, email: string, reason?: SuppressionReason | undefined) {
      const address = parseAddress(email)
      if (address === undefined) return yield* InvalidRequest.single("email", "is not an e-mail address")
      const chosen = reason ?? "MANUAL"
      if (!SUPPRESSION_REASONS.includes(chosen)) return yield* InvalidRequest.single("reason", `must be one of ${SUPPRESSION_REASONS.join(", ")}`)
      const row = yield* repo.put(partnerId, address, chosen)
      return row
    })

    const remove = Effect.fn("Suppression.remove")(function*(partnerId: string, email: string) {
      const address = parseAddress(email)
      const deleted = address === undefined ? false : yield* repo.remove(partnerId, address)
      if (!deleted) return yield* notFound(address ?? email)
    })

    return { list, get, put, remove } as const
  }),
  dependencies: [SuppressionRepo.Default, CursorPages.Default]
}) {}
