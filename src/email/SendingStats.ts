import { Effect } from "effect"
import { EmailMessagesRepo } from "./EmailMessagesRepo.ts"
import { PartnersRepo } from "./PartnersRepo.ts"

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

/** A partner's limits and what the last 24 hours were charged (recipients). */
export interface Quotas {
  readonly max24HourSend: number
  readonly maxSendRate: number
  readonly sentLast24Hours: number
  readonly productionAccess: boolean
}

/** Recipients sent to, and the per-recipient events, over a window. */
export interface Counts {
  readonly sent: number
  readonly delivered: number
  readonly bounced: number
  readonly complained: number
  readonly rejected: number
}

export interface SendingCounts {
  readonly last24Hours: Counts
  readonly last14Days: Counts
}

export interface Reputation {
  readonly bounceRate: number
  readonly complaintRate: number
  readonly status: ReputationStatus
}

/** A fraction, 0 when nothing was counted (a rate over nothing is no rate). */
const rate = (part: number, whole: number) => (whole === 0 ? 0 : Math.min(1, part / whole))

/**
 * GET /quotas, /stats and /reputation (SES v2's GetAccount, GetDomainStatisticsReport and the
 * reputation dashboard), each one query. Counts are per recipient: a recipient is sent to unless
 * it was suppressed; delivered, bounced, complained and rejected count the per-recipient events
 * (SEND is per message and SUPPRESSED is not a send, so neither is counted).
 */
export class SendingStats extends Effect.Service<SendingStats>()("herald/email/SendingStats", {
  effect: Effect.gen(function*() {
    const partners = yield* PartnersRepo
    const messages = yield* EmailMessagesRepo

    /** `sent_last_24_hours` counts what sends were charged when accepted (recipient_count), as the daily quota does. */
    const quotas = Effect.fn("SendingStats.quotas")(function*(partnerId: string) {
      const row = yield* partners.quotas(partnerId)
      if (row === undefined) return yield* Effect.dieMessage(`no partner ${partnerId}`)
      return { max24HourSend: row.daily, maxSendRate: row.rate, sentLast24Hours: row.sent, productionAccess: row.productionAccess } satisfies Quotas
    })

    const stats = Effect.fn("SendingStats.stats")(function*(partnerId: string) {
      const r = yield* messages.counts(partnerId)
      return {
        last24Hours: { sent: r.sentDay, delivered: r.deliveredDay, bounced: r.bouncedDay, complained: r.complainedDay, rejected: r.rejectedDay },
        last14Days: {
          sent: r.sentFortnight,
          delivered: r.deliveredFortnight,
          bounced: r.bouncedFortnight,
          complained: r.complainedFortnight,
          rejected: r.rejectedFortnight
        }
      } satisfies SendingCounts
    })

    /**
     * Over the last 14 days: hard bounces (a soft bounce's detail starts with `soft`) over
     * recipients sent to, complaints over deliveries.
     */
    const reputation = Effect.fn("SendingStats.reputation")(function*(partnerId: string) {
      const r = yield* messages.reputationCounts(partnerId)
      const bounceRate = rate(r.hardBounces, r.sent)
      const complaintRate = rate(r.complaints, r.deliveries)
      return { bounceRate, complaintRate, status: reputationStatus(bounceRate, complaintRate) } satisfies Reputation
    })

    return { quotas, stats, reputation } as const
  }),
  dependencies: [PartnersRepo.Default, EmailMessagesRepo.Default]
}) {}
