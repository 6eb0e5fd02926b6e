import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"

// The mailer's context: the helper only records a write through it, whatever the command.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Ctx = ActorContext<any>

export const SUPPRESSION_REASONS = ["BOUNCE", "COMPLAINT", "MANUAL"] as const
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number]

/** An address on a partner's suppression list. */
export interface Suppressed {
  readonly suppressionId: string
  readonly email: string
  readonly reason: SuppressionReason
  readonly createdAt: Date
  /** created_at to the microsecond, as a cursor carries it. */
  readonly position: string
}

const COLUMNS = `suppression_id::text, email, reason, created_at, ${positionOf("created_at")} AS position`

/**
 * An address suppressed in the commit of the mailer's command (a hard bounce, a complaint): the
 * row is the actor's write of this table, and an address already listed keeps its row.
 */
export const suppressIn = (ctx: Ctx, partnerId: string, email: string, reason: "BOUNCE" | "COMPLAINT") =>
  ctx.insert("email_suppression", { partner_id: partnerId, email, reason })

/** The one writer of `email_suppression` (the mailer's rows through `suppressIn`). */
export class SuppressionRepo extends Effect.Service<SuppressionRepo>()("herald/email/SuppressionRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const page = Effect.fn("SuppressionRepo.page")(function*(partnerId: string, after: PagePosition | undefined, take: number) {
      return yield* sql<Suppressed>`
            SELECT ${sql.literal(COLUMNS)} FROM email_suppression t
            WHERE ${
        sql.and([
          sql`partner_id = ${partnerId}::uuid`,
          ...(after === undefined ? [] : [sql`(created_at, suppression_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`])
        ])
      }
            ORDER BY t.created_at DESC, t.suppression_id DESC
            LIMIT ${take}`
    }, Effect.orDie)

    const find = Effect.fn("SuppressionRepo.find")(function*(partnerId: string, address: string) {
      const [row] = yield* sql<Suppressed>`
        SELECT ${sql.literal(COLUMNS)} FROM email_suppression
        WHERE partner_id = ${partnerId}::uuid AND email = ${address}`
      return row
    }, Effect.orDie)

    /** Adds the address, or gives a listed one the new reason (it keeps its created_at). */
    const put = Effect.fn("SuppressionRepo.put")(function*(partnerId: string, address: string, reason: SuppressionReason) {
      const [row] = yield* sql<Suppressed>`
        INSERT INTO email_suppression (partner_id, email, reason) VALUES (${partnerId}::uuid, ${address}, ${reason})
        ON CONFLICT (partner_id, email) DO UPDATE SET reason = EXCLUDED.reason
        RETURNING ${sql.literal(COLUMNS)}`
      return row!
    }, Effect.orDie)

    /** Whether the address was listed. */
    const remove = Effect.fn("SuppressionRepo.remove")(function*(partnerId: string, address: string) {
      const deleted = yield* sql`
        DELETE FROM email_suppression WHERE partner_id = ${partnerId}::uuid AND email = ${address}
        RETURNING suppression_id`
      return deleted.length > 0
    }, Effect.orDie)

    /** The listed addresses among these. */
    const listedAmong = Effect.fn("SuppressionRepo.listedAmong")(function*(partnerId: string, addresses: ReadonlyArray<string>) {
      const rows = yield* sql<{ email: string }>`
            SELECT email FROM email_suppression WHERE partner_id = ${partnerId}::uuid AND email = ANY(${addresses}::text[])`
      return new Set(rows.map((r) => r.email))
    }, Effect.orDie)

    return { page, find, put, remove, listedAmong } as const
  })
}) {}
