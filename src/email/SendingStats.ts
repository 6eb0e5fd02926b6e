import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** SES's review thresholds, as fractions: bounces over recipients sent to, complaints over deliveries. */
export const BOUNCE_WARNING = 0.05
export const BOUNCE_PROBATION = 0.1
export const COMPLAINT_WARNING = 0.001
export const COMPLAINT_PROBATION = 0.005

export type ReputationStatus = "HEALTHY" | "WARNING" | "PROBATION"

export const reputationStatus = (bounceRate: number, complaintRate: number): ReputationStatus =>
  bounceRate >= BOUNCE_PROBATION || complaintRate >= COMPLAINT_PROBATION
    ? "PROBATION"
    : bounceRate >= BOUNCE_WARNING || complaintRate >= COMPLAINT_WARNING
    ? "WARNING"
    : "HEALTHY"

/** A fraction, 0 when nothing was counted (a rate over nothing is no rate). */
const rate = (part: number, whole: number) => (whole === 0 ? 0 : Math.min(1, part / whole))

interface CountsRow {
  readonly sentDay: number
  readonly deliveredDay: number
  readonly bouncedDay: number
  readonly complainedDay: number
  readonly rejectedDay: number
  readonly sentFortnight: number
  readonly deliveredFortnight: number
  readonly bouncedFortnight: number
  readonly complainedFortnight: number
  readonly rejectedFortnight: number
}

/**
 * GET /quotas, /stats and /reputation (SES v2's GetAccount, GetDomainStatisticsReport and the
 * reputation dashboard), each one query. Counts are per recipient: a recipient is sent to unless
 * it was suppressed; delivered, bounced, complained and rejected count the per-recipient events
 * (SEND is per message and SUPPRESSED is not a send, so neither is counted).
 */
export class SendingStats extends Effect.Service<SendingStats>()("herald/email/SendingStats", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** `sent_last_24_hours` counts what sends were charged when accepted (recipient_count), as the daily quota does. */
    const quotas = Effect.fn("SendingStats.quotas")(function*(partnerId: string) {
      const [row] = yield* sql<{ daily: number; rate: number; productionAccess: boolean; sent: number }>`
        SELECT p.max_24_hour_send AS daily, p.max_send_rate AS rate, p.production_access,
               COALESCE((
                 SELECT sum(m.recipient_count) FROM email_messages m
                 WHERE m.partner_id = p.partner_id AND m.created_at > now() - interval '24 hours'
               ), 0)::int AS sent
        FROM partners p WHERE p.partner_id = ${partnerId}::uuid`.pipe(Effect.orDie)
      if (row === undefined) return yield* Effect.dieMessage(`no partner ${partnerId}`)
      return {
        success: true as const,
        max_24_hour_send: row.daily,
        max_send_rate: row.rate,
        sent_last_24_hours: row.sent,
        production_access_enabled: row.productionAccess
      }
    })

    const stats = Effect.fn("SendingStats.stats")(function*(partnerId: string) {
      const [row] = yield* sql<CountsRow>`
        WITH sent AS (
          SELECT count(*) FILTER (WHERE m.created_at > now() - interval '24 hours')::int AS day, count(*)::int AS fortnight
          FROM email_messages m JOIN email_recipients r ON r.message_id = m.message_id
          WHERE m.partner_id = ${partnerId}::uuid AND m.created_at > now() - interval '14 days' AND r.status <> 'suppressed'
        ), happened AS (
          SELECT type, count(*) FILTER (WHERE created_at > now() - interval '24 hours')::int AS day, count(*)::int AS fortnight
          FROM email_events
          WHERE partner_id = ${partnerId}::uuid AND created_at > now() - interval '14 days'
            AND recipient IS NOT NULL AND type IN ('DELIVERY', 'BOUNCE', 'COMPLAINT', 'REJECT')
          GROUP BY type
        )
        SELECT sent.day AS sent_day, sent.fortnight AS sent_fortnight,
               COALESCE(sum(h.day) FILTER (WHERE h.type = 'DELIVERY'), 0)::int AS delivered_day,
               COALESCE(sum(h.fortnight) FILTER (WHERE h.type = 'DELIVERY'), 0)::int AS delivered_fortnight,
               COALESCE(sum(h.day) FILTER (WHERE h.type = 'BOUNCE'), 0)::int AS bounced_day,
               COALESCE(sum(h.fortnight) FILTER (WHERE h.type = 'BOUNCE'), 0)::int AS bounced_fortnight,
               COALESCE(sum(h.day) FILTER (WHERE h.type = 'COMPLAINT'), 0)::int AS complained_day,
               COALESCE(sum(h.fortnight) FILTER (WHERE h.type = 'COMPLAINT'), 0)::int AS complained_fortnight,
               COALESCE(sum(h.day) FILTER (WHERE h.type = 'REJECT'), 0)::int AS rejected_day,
               COALESCE(sum(h.fortnight) FILTER (WHERE h.type = 'REJECT'), 0)::int AS rejected_fortnight
        FROM sent LEFT JOIN happened h ON true
        GROUP BY sent.day, sent.fortnight`.pipe(Effect.orDie)
      const r = row!
      return {
        success: true as const,
        stats: {
          last_24_hours: { sent: r.sentDay, delivered: r.deliveredDay, bounced: r.bouncedDay, complained: r.complainedDay, rejected: r.rejectedDay },
          last_14_days: {
            sent: r.sentFortnight,
            delivered: r.deliveredFortnight,
            bounced: r.bouncedFortnight,
            complained: r.complainedFortnight,
            rejected: r.rejectedFortnight
          }
        }
      }
    })

    /**
     * Over the last 14 days: hard bounces (a soft bounce's detail starts with `soft`) over
     * recipients sent to, complaints over deliveries.
     */
    const reputation = Effect.fn("SendingStats.reputation")(function*(partnerId: string) {
      const [row] = yield* sql<{ sent: number; hardBounces: number; complaints: number; deliveries: number }>`
        SELECT
          (SELECT count(*)::int FROM email_messages m JOIN email_recipients r ON r.message_id = m.message_id
           WHERE m.partner_id = ${partnerId}::uuid AND m.created_at > now() - interval '14 days' AND r.status <> 'suppressed') AS sent,
          count(*) FILTER (WHERE e.type = 'BOUNCE' AND e.detail NOT LIKE 'soft%')::int AS hard_bounces,
          count(*) FILTER (WHERE e.type = 'COMPLAINT')::int AS complaints,
          count(*) FILTER (WHERE e.type = 'DELIVERY')::int AS deliveries
        FROM email_events e
        WHERE e.partner_id = ${partnerId}::uuid AND e.created_at > now() - interval '14 days'
          AND e.recipient IS NOT NULL AND e.type IN ('DELIVERY', 'BOUNCE', 'COMPLAINT')`.pipe(Effect.orDie)
      const r = row!
      const bounceRate = rate(r.hardBounces, r.sent)
      const complaintRate = rate(r.complaints, r.deliveries)
      return { success: true as const, bounce_rate: bounceRate, complaint_rate: complaintRate, status: reputationStatus(bounceRate, complaintRate) }
    })

    return { quotas, stats, reputation } as const
  })
}) {}
