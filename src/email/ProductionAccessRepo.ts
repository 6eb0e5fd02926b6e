import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"

export type MailType = "MARKETING" | "TRANSACTIONAL"
export type AccessStatus = "PENDING" | "GRANTED" | "DENIED"

/** A request to leave the sandbox. */
export interface AccessRequest {
  readonly requestId: string
  readonly mailType: MailType
  readonly websiteUrl: string
  readonly useCaseDescription: string
  readonly status: AccessStatus
  readonly reason: string | null
  readonly createdAt: Date
  /** created_at to the microsecond, as a cursor carries it. */
  readonly position: string
}

const COLUMNS = `request_id::text, mail_type, website_url, use_case_description, status, reason, created_at, ${positionOf("created_at")} AS position`

/** The one writer of `email_production_access`: partners' requests to leave the sandbox and the operator's decisions. */
export class ProductionAccessRepo extends Effect.Service<ProductionAccessRepo>()("herald/email/ProductionAccessRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = Effect.fn("ProductionAccessRepo.insert")(function*(
      partnerId: string,
      input: { readonly mailType: MailType; readonly websiteUrl: string; readonly useCaseDescription: string }
    ) {
      const [inserted] = yield* sql<AccessRequest>`
          INSERT INTO email_production_access (partner_id, mail_type, website_url, use_case_description)
          VALUES (${partnerId}::uuid, ${input.mailType}, ${input.websiteUrl}, ${input.useCaseDescription})
          RETURNING ${sql.literal(COLUMNS)}`
      return inserted!
    }, Effect.orDie)

    /** One page of the partner's requests, newest first, after `after`. */
    const page = Effect.fn("ProductionAccessRepo.page")(function*(partnerId: string, after: PagePosition | undefined, take: number) {
      return yield* sql<AccessRequest>`
            SELECT ${sql.literal(COLUMNS)} FROM email_production_access t
            WHERE ${
        sql.and([
          sql`partner_id = ${partnerId}::uuid`,
          ...(after === undefined ? [] : [sql`(created_at, request_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`])
        ])
      }
            ORDER BY t.created_at DESC, t.request_id DESC
            LIMIT ${take}`
    }, Effect.orDie)

    /** The partner's latest PENDING request, locked for the transaction around it. */
    const lockLatestPending = Effect.fn("ProductionAccessRepo.lockLatestPending")(function*(partnerId: string) {
      const [pending] = yield* sql<{ requestId: string }>`
          SELECT request_id::text FROM email_production_access
          WHERE partner_id = ${partnerId}::uuid AND status = 'PENDING' ORDER BY created_at DESC LIMIT 1 FOR UPDATE`
      return pending?.requestId
    }, Effect.orDie)

    const decide = Effect.fn("ProductionAccessRepo.decide")(function*(requestId: string, status: AccessStatus, reason: string | undefined) {
      yield* sql`UPDATE email_production_access SET status = ${status}, reason = ${reason ?? null}, decided_at = now() WHERE request_id = ${requestId}::uuid`
    }, Effect.orDie)

    /** A grant by the operator without a request: recorded as a GRANTED one. */
    const insertGranted = Effect.fn("ProductionAccessRepo.insertGranted")(function*(partnerId: string, reason: string | undefined) {
      yield* sql`
            INSERT INTO email_production_access (partner_id, mail_type, website_url, use_case_description, status, reason, decided_at)
            VALUES (${partnerId}::uuid, 'TRANSACTIONAL', '', 'granted by the operator without a request', 'GRANTED', ${reason ?? null}, now())`
    }, Effect.orDie)

    return { insert, page, lockLatestPending, decide, insertGranted } as const
  })
}) {}
