import { Effect } from "effect"
import { InvalidRequest } from "../domain/errors.ts"
import { hasRole, seesAllBots } from "../domain/access.ts"
import type { Principal } from "../domain/signIn.ts"
import { Wallet } from "../wallet/Wallet.ts"
import { OverviewRepo } from "./OverviewRepo.ts"

/** The statuses today's messages are counted by (a WhatsApp message Meta accepted counts as sent). */
export const OVERVIEW_STATUSES = ["queued", "unconfirmed", "sent", "delivered", "read", "failed"] as const
type Status = (typeof OVERVIEW_STATUSES)[number]

export const HOURS = 24

/** How long one account's overview is served from this node's memory: a console left open asks every few seconds. */
const FRESH_MS = 15_000
const CACHE_MAX = 10_000

const HOUR_MS = 3_600_000

/**
 * The UTC instant of the last midnight in `timeZone` (an IANA name), or undefined for a name the
 * runtime does not know. The offset is the zone's at `now`: on a day whose clocks change, midnight
 * is off by the change.
 */
export const startOfDay = (now: Date, timeZone: string): Date | undefined => {
  let parts: Array<Intl.DateTimeFormatPart>
  try {
    parts = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit"
    }).formatToParts(now)
  } catch {
    return undefined
  }
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value ?? 0)
  const wallClock = Date.UTC(part("year"), part("month") - 1, part("day"), part("hour"), part("minute"), part("second"))
  const offset = wallClock - Math.floor(now.getTime() / 1000) * 1000
  return new Date(Date.UTC(part("year"), part("month") - 1, part("day")) - offset)
}

const ACCEPTED_AS: Record<string, Status> = { accepted: "sent" }

/**
 * What the console's overview shows (GET /api/v1/rcs/overview): the account's plan and wallet,
 * today's messages by status, and sends and failures per hour over the last 24 hours. Messages are
 * the RCS single sends (the message log), the messages of the account's broadcasts, and, for a
 * member who sees every bot, the WhatsApp messages of the public API; a bot-scoped member counts
 * only the messages of its bots. A message counts on the day it was created (a broadcast's when it
 * was sent or failed), by its status now; the hours count when messages were sent and when they
 * failed.
 *
 * Each figure is read from the rows of its window (indexes by account and time; a broadcast's
 * targets by the broadcasts active in it), so the cost grows with the day's traffic: an account's
 * answer is kept 15 s per node and scope.
 */
export class Overview extends Effect.Service<Overview>()("herald/overview/Overview", {
  effect: Effect.gen(function*() {
    const repo = yield* OverviewRepo
    const wallet = yield* Wallet
    const cache = new Map<string, { readonly at: number; readonly value: Figures }>()

    const figures = (principal: Principal, today: Date, from: Date): Effect.Effect<Figures> =>
      Effect.gen(function*() {
        const bots = seesAllBots(principal) ? undefined : principal.bots.filter((b) => b !== "*")
        const { account: plan, statuses, hours } = yield* repo.counts({ accountId: principal.accountId, bots }, today, from)

        const byStatus = Object.fromEntries(OVERVIEW_STATUSES.map((s) => [s, 0])) as Record<Status, number>
        for (const row of statuses) {
          const status = (ACCEPTED_AS[row.status] ?? row.status) as Status
          if (status in byStatus) byStatus[status] += row.n
        }
        const perHour = new Map<number, { sent: number; failed: number }>()
        for (let i = 0; i < HOURS; i++) perHour.set(from.getTime() + i * HOUR_MS, { sent: 0, failed: 0 })
        for (const row of hours) {
          const slot = perHour.get(new Date(row.hour).getTime())
          if (slot === undefined) continue
          slot.sent += row.sent
          slot.failed += row.failed
        }
        return {
          plan: plan?.plan ?? "starter",
          label: plan?.label ?? principal.accountLabel,
          byStatus,
          hours: [...perHour].map(([hour, counts]) => ({ hour: new Date(hour).toISOString(), ...counts }))
        }
      })

    const read = (principal: Principal, query: { readonly tz?: string | undefined }) =>
      Effect.gen(function*() {
        const timeZone = query.tz ?? "UTC"
        const now = new Date()
        const today = startOfDay(now, timeZone)
        if (today === undefined) {
          return yield* InvalidRequest.single("tz", `must be an IANA time zone such as Asia/Kolkata or UTC; ${JSON.stringify(timeZone)} is not one`)
        }
        const from = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - (HOURS - 1) * HOUR_MS)
        const key = `${principal.accountId}|${seesAllBots(principal) ? "*" : [...principal.bots].sort().join(",")}|${today.getTime()}|${from.getTime()}`
        const cached = cache.get(key)
        const found = cached !== undefined && now.getTime() - cached.at < FRESH_MS ? cached.value : yield* figures(principal, today, from)
        if (cached === undefined || cached.value !== found) {
          if (cache.size >= CACHE_MAX) cache.clear()
          cache.set(key, { at: now.getTime(), value: found })
        }
        // The balance is the owner's to see (billing), as GET /api/v1/rcs/wallet is.
        const balance = hasRole(principal, "owner") ? yield* wallet.walletOf(principal.accountId) : undefined
        return {
          account: { accountId: principal.accountId, label: found.label, plan: found.plan },
          wallet: balance,
          messagesToday: { since: today, total: Object.values(found.byStatus).reduce((a, b) => a + b, 0), byStatus: found.byStatus },
          last24Hours: found.hours
        } satisfies AccountOverview
      })

    return { read } as const
  }),
  dependencies: [OverviewRepo.Default, Wallet.Default]
}) {}

/** The console's first page: the account, the owner's balance, today's messages and the last 24 hours. */
export interface AccountOverview {
  readonly account: { readonly accountId: string; readonly label: string; readonly plan: string }
  /** Undefined unless the reader is the owner (billing is the owner's). */
  readonly wallet: { readonly balance: number; readonly currency: string } | undefined
  readonly messagesToday: { readonly since: Date; readonly total: number; readonly byStatus: Record<Status, number> }
  readonly last24Hours: Figures["hours"]
}

interface Figures {
  readonly plan: string
  readonly label: string
  readonly byStatus: Record<Status, number>
  readonly hours: ReadonlyArray<{ readonly hour: string; readonly sent: number; readonly failed: number }>
}
