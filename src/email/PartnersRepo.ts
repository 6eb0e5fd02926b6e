import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { PreparedStatements } from "../storage/PreparedStatements.ts"
import { PRODUCTION_QUOTA } from "./model.ts"

export interface PartnerRow {
  readonly partnerId: string
  readonly name: string
  readonly max24HourSend: number
  readonly maxSendRate: number
  readonly productionAccess: boolean
}

const COLUMNS = "partner_id::text, name, max_24_hour_send AS max24_hour_send, max_send_rate, production_access"

/**
 * The one writer of `partners`: a partner of the e-mail API, its key's hash, its quotas and whether
 * it left the sandbox. The key lookup of every request stays a prepared statement.
 */
export class PartnersRepo extends Effect.Service<PartnersRepo>()("herald/email/PartnersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const prepared = yield* PreparedStatements
    const byHash = prepared.prepare<{ partnerId: string; name: string }>(`SELECT partner_id::text, name FROM partners WHERE key_hash = $1`)

    const insert = Effect.fn("PartnersRepo.insert")(function*(name: string, keyHash: string, keyLastFour: string) {
      const [row] = yield* sql<{ partnerId: string }>`
          INSERT INTO partners (name, key_hash, key_last_four) VALUES (${name}, ${keyHash}, ${keyLastFour})
          RETURNING partner_id::text`
      return row!.partnerId
    }, Effect.orDie)

    const findByKeyHash = Effect.fn("PartnersRepo.findByKeyHash")(function*(hash: string) {
      const [row] = yield* byHash([hash])
      return row
    }, Effect.orDie)

    const findById = Effect.fn("PartnersRepo.findById")(function*(partnerId: string) {
      const [row] = yield* sql<PartnerRow>`SELECT ${sql.literal(COLUMNS)} FROM partners WHERE partner_id = ${partnerId}::uuid`
      return row
    }, Effect.orDie)

    /** Either limit, or both; an absent one is left as it is. */
    const setQuota = Effect.fn("PartnersRepo.setQuota")(function*(partnerId: string, quota: { readonly daily?: number | undefined; readonly rate?: number | undefined }) {
      const [row] = yield* sql<PartnerRow>`
          UPDATE partners SET max_24_hour_send = COALESCE(${quota.daily ?? null}::int, max_24_hour_send),
                              max_send_rate = COALESCE(${quota.rate ?? null}::int, max_send_rate)
          WHERE partner_id = ${partnerId}::uuid RETURNING ${sql.literal(COLUMNS)}`
      return row!
    }, Effect.orDie)

    /** Out of the sandbox, with production's quotas (never lowering what an operator set higher). */
    const grantProduction = Effect.fn("PartnersRepo.grantProduction")(function*(partnerId: string) {
      yield* sql`
            UPDATE partners SET production_access = true,
              max_24_hour_send = GREATEST(max_24_hour_send, ${PRODUCTION_QUOTA.max24HourSend}),
              max_send_rate = GREATEST(max_send_rate, ${PRODUCTION_QUOTA.maxSendRate})
            WHERE partner_id = ${partnerId}::uuid`
    }, Effect.orDie)

    /**
     * The partner's row locked for the transaction around it, with whether a production access
     * request of it is pending; undefined when there is no such partner.
     */
    const lockForAccessRequest = Effect.fn("PartnersRepo.lockForAccessRequest")(function*(partnerId: string) {
      const [partner] = yield* sql<{ productionAccess: boolean; pending: boolean }>`
          SELECT production_access,
                 EXISTS (SELECT 1 FROM email_production_access r WHERE r.partner_id = p.partner_id AND r.status = 'PENDING') AS pending
          FROM partners p WHERE p.partner_id = ${partnerId}::uuid FOR UPDATE OF p`
      return partner
    }, Effect.orDie)

    /** The daily quota and send rate the mailer paces by. */
    const limits = Effect.fn("PartnersRepo.limits")(function*(partnerId: string) {
      const [row] = yield* sql<{ max24HourSend: number; maxSendRate: number }>`
      SELECT max_24_hour_send AS max24_hour_send, max_send_rate FROM partners WHERE partner_id = ${partnerId}::uuid`
      return row
    }, Effect.orDie)

    /** GET /quotas: the limits and the recipients charged over the last 24 hours. */
    const quotas = Effect.fn("PartnersRepo.quotas")(function*(partnerId: string) {
      const [row] = yield* sql<{ daily: number; rate: number; productionAccess: boolean; sent: number }>`
        SELECT p.max_24_hour_send AS daily, p.max_send_rate AS rate, p.production_access,
               COALESCE((
                 SELECT sum(m.recipient_count) FROM email_messages m
                 WHERE m.partner_id = p.partner_id AND m.created_at > now() - interval '24 hours'
               ), 0)::int AS sent
        FROM partners p WHERE p.partner_id = ${partnerId}::uuid`
      return row
    }, Effect.orDie)

    return { insert, findByKeyHash, findById, setQuota, grantProduction, lockForAccessRequest, limits, quotas } as const
  }),
  dependencies: [PreparedStatements.Default]
}) {}
