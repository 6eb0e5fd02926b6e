import { Array as Arr, Duration, Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { ActorClient, ActorKind } from "../actors/runtime/index.ts"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { EmailRelay } from "../gateway/EmailRelay.ts"
import type { OutgoingMail, RelayOutcome } from "../gateway/mail.ts"
import { domainOf } from "./addresses.ts"
import { type DueRecipient, EmailMessagesRepo, insertMessage, insertRecipient } from "./EmailMessagesRepo.ts"
import { Identities } from "./Identities.ts"
import { MailLedger, type NewEvent } from "./MailLedger.ts"
import { QuotaExceeded } from "./model.ts"
import { PartnersRepo } from "./PartnersRepo.ts"
import { SuppressionRepo } from "./SuppressionRepo.ts"

/** A send accepted by POST /emails, checked and rendered on the API node; the mailer counts it against the quota. */
export class MailAccept extends Schema.TaggedRequest<MailAccept>()("MailAccept", {
  failure: QuotaExceeded,
  success: Schema.Struct({ status: Schema.String }),
  payload: {
    messageId: Schema.String,
    from: Schema.String,
    to: Schema.Array(Schema.String),
    cc: Schema.Array(Schema.String),
    bcc: Schema.Array(Schema.String),
    replyTo: Schema.Array(Schema.String),
    subject: Schema.String,
    text: Schema.NullOr(Schema.String),
    html: Schema.NullOr(Schema.String),
    configSetId: Schema.NullOr(Schema.String),
    tags: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
    /** Every envelope recipient once (to, cc and bcc), as stored. */
    recipients: Schema.Array(Schema.String)
  }
}) {}

/** Relay what is due (a durable timer). */
export class MailFlush extends Schema.TaggedClass<MailFlush>()("MailFlush", {}) {}

const Outcome = Schema.Struct({
  messageId: Schema.String,
  recipient: Schema.String,
  attempts: Schema.Int,
  tag: Schema.Literal("Accepted", "Bounced", "Deferred", "Rejected"),
  response: Schema.String
})

/** The relay's answers to a flush, sent back through the stream by the process that relayed it. */
export class MailRelayed extends Schema.TaggedClass<MailRelayed>()("MailRelayed", {
  outcomes: Schema.Array(Outcome)
}) {}

/** A report the SMTP sink (or a real relay's feedback) sent after it accepted a message. */
export class MailFeedback extends Schema.TaggedClass<MailFeedback>()("MailFeedback", {
  messageId: Schema.String,
  recipient: Schema.String,
  type: Schema.Literal("complaint", "bounce"),
  detail: Schema.String
}) {}

export const MailerCommand = Schema.Union(MailAccept, MailFlush, MailRelayed, MailFeedback)
type MailerCommand = typeof MailerCommand.Type

const MailerState = Schema.Struct({
  /** When the flush timer is due; null when none is set. */
  flushAt: Schema.NullOr(Schema.Number),
  /** The send rate's next free slot: a flush of n recipients at rate r pushes it n/r seconds on. */
  nextSlotAt: Schema.Number,
  /** Recipients accepted per minute (epoch minute → count), the last 24 hours' worth: the daily quota's window. */
  window: Schema.Array(Schema.Tuple(Schema.Int, Schema.Int)),
  /**
   * Rows changed since the last flush looked (sends accepted, outcomes settled): a flush applied in
   * the same batch reads the database before they are committed, so it looks again shortly.
   */
  dirty: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
type MailerState = typeof MailerState.Type

/** Recipients one flush hands to the relay at most, whatever the rate. */
export const FLUSH_MAX = 256
/** Relay transactions in flight at once within a flush. */
const RELAY_CONCURRENCY = 32
/** Recipients this process may have out with the relay at once. */
const MAX_OUT = FLUSH_MAX * 4
/** A try with no outcome after this long is taken for lost and made again (the relay's own limit is 60 s). */
const SENDING_DEADLINE_MS = 120_000
/** How soon a flush looks again at rows it could not see yet. */
const RECHECK_MS = 20
/** This process: a recipient `sending` by another was being relayed by a process that died or let go of the actor. */
const PROCESS = randomUUID()
const DAY_MINUTES = 24 * 60

const minuteOf = (ms: number) => Math.floor(ms / 60_000)
const windowTotal = (window: MailerState["window"], now: number) => {
  const from = minuteOf(now) - DAY_MINUTES
  return window.reduce((sum, [minute, count]) => (minute > from ? sum + count : sum), 0)
}
const counted = (window: MailerState["window"], now: number, count: number): MailerState["window"] => {
  const minute = minuteOf(now)
  const kept = window.filter(([m]) => m > minute - DAY_MINUTES)
  const last = kept[kept.length - 1]
  return last !== undefined && last[0] === minute ? [...kept.slice(0, -1), [minute, last[1] + count]] : [...kept, [minute, count]]
}

/** Schedules the flush at `at`: a flush is brought forward, never put off. */
const flushAt = (ctx: ActorContext<MailerCommand>, current: MailerState, at: number): MailerState => {
  if (current.flushAt !== null && current.flushAt <= at) return current
  ctx.schedule(new MailFlush(), { at: new Date(at) }, "flush")
  return { ...current, flushAt: at }
}

/** Records the partner's events in the command's commit (and their deliveries, with a configuration set). */
const record = (ctx: ActorContext<MailerCommand>, rows: ReadonlyArray<NewEvent>, configSetId: string | null) =>
  Effect.flatMap(MailLedger, (ledger) => ledger.record(ctx, ctx.key, rows, configSetId))

/**
 * `mailer`: one actor per partner (key = partner_id). It alone counts the partner's sends against
 * the 24-hour quota, so two API nodes cannot both let a send cross it; it relays queued recipients
 * at the partner's send rate (paced, never refused), one SMTP transaction per recipient so each has
 * its own outcome. A flush commits its recipients as `sending` first, then relays them, and the
 * relay's answers come back as a command of their own: sends keep being accepted while the relay
 * is slow or down. Recipients a dead (or former) owner was sending are relayed again by the next
 * flush with the same Message-ID, which the relay takes as the same mail (the SMTP sink records
 * it once; docs/partner-email.md says what a real relay does): at least once, never lost.
 */
export const MailerKind = ActorKind.make("mailer", {
  command: MailerCommand,
  state: MailerState,
  initial: (): MailerState => ({ flushAt: null, nextSlotAt: 0, window: [], dirty: false }),
  passivateAfter: Duration.minutes(5),
  handlers: {
    MailAccept: (state, command, ctx) =>
      Effect.gen(function*() {
        const partnerId = ctx.key
        const now = Date.now()
        const { max } = yield* limitsOf(partnerId)
        const used = windowTotal(state.window, now)
        if (used + command.recipients.length > max) {
          ctx.fail(command, new QuotaExceeded({
            message: `this send's ${command.recipients.length} recipient(s) would cross the 24-hour quota (${used} of ${max} used)`
          }))
          return state
        }
        const suppressed = yield* (yield* SuppressionRepo).listedAmong(partnerId, command.recipients)
        const live = command.recipients.filter((r) => !suppressed.has(r))
        const status = live.length === 0 ? "SUPPRESSED" : "QUEUED"
        insertMessage(ctx, { ...command, partnerId, recipientCount: command.recipients.length, status })
        for (const recipient of command.recipients) {
          insertRecipient(ctx, command.messageId, recipient, partnerId, suppressed.has(recipient) ? "suppressed" : "queued")
        }
        const suppressedEvents: Array<NewEvent> = [...suppressed].map((recipient) => ({
          messageId: command.messageId, type: "SUPPRESSED", recipient, detail: "the address is on the partner's suppression list"
        }))
        yield* record(
          ctx,
          live.length === 0
            ? [...suppressedEvents, { messageId: command.messageId, type: "REJECT", recipient: null, detail: "no recipient left after suppression" }]
            : [{ messageId: command.messageId, type: "SEND", recipient: null, detail: `${live.length} recipient(s)` }, ...suppressedEvents],
          command.configSetId
        )
        ctx.reply(command, { status })
        const next = { ...state, window: counted(state.window, now, command.recipients.length) }
        return live.length === 0 ? next : flushAt(ctx, { ...next, dirty: true }, Math.max(now, state.nextSlotAt))
      }),

    MailFlush: (state, _command, ctx) =>
      Effect.gen(function*() {
        const messages = yield* EmailMessagesRepo
        const partnerId = ctx.key
        const now = Date.now()
        const idle: MailerState = { ...state, flushAt: null, dirty: false }
        if (now < state.nextSlotAt) return flushAt(ctx, idle, state.nextSlotAt)
        const { rate } = yield* limitsOf(partnerId)
        // Tries still out bound what may start: a slow relay is not handed ever more at once.
        const out = yield* messages.outstandingBy(partnerId, PROCESS)
        const budget = Math.min(FLUSH_MAX, rate, MAX_OUT - out)
        // A relayed batch's outcome starts the next flush (or, should it be lost, this look in a second).
        if (budget <= 0) return flushAt(ctx, idle, now + 1_000)
        const due = yield* messages.due(partnerId, PROCESS, budget)
        if (due.length === 0) {
          if (state.dirty) return flushAt(ctx, idle, now + RECHECK_MS)
          const pending = yield* messages.pending(partnerId)
          if (pending === undefined || pending.outstanding === 0) return idle
          // While anything is out or waiting, look at least once a second: an outcome lost with
          // its process, or a retry settled in a batch this flush could not see, is not left behind.
          const at = pending.at === null ? Infinity : new Date(pending.at).getTime()
          return flushAt(ctx, idle, Math.max(now + RECHECK_MS, Math.min(at, now + 1_000)))
        }
        const lostAfter = new Date(now + SENDING_DEADLINE_MS).toISOString()
        // Written after the batch's other changes, and only over rows still waiting: a command
        // before this one in the batch may have settled a row this flush read as still out.
        ctx.persist(messages.markSending(due, PROCESS, lostAfter))
        const keys = yield* (yield* Identities).dkimKeys(partnerId, [...new Set(due.map((row) => domainOf(row.fromAddress)))])
        const relay = yield* EmailRelay
        const client = yield* ActorClient
        // Relayed once the batch is recorded as sending; the outcomes come back through the
        // stream. If this process dies first, the next flush finds the rows sending by another.
        // Each e-mail leaves only while this node holds the partner's partition: one that gave it up
        // (paused or cut off past its lease) relays none, and the rows it marked sending are the
        // next owner's at once (sending_by is another process).
        ctx.afterCommit(
          Effect.forEach(
            due,
            (row) =>
              ctx.lease.current.pipe(
                Effect.matchEffect({
                  onSuccess: () => Effect.map(relay.send(mailOf(row, keys.get(domainOf(row.fromAddress)))), (outcome) => Option.some(outcomeOf(row, outcome))),
                  onFailure: () => Effect.succeed(Option.none())
                })
              ),
            { concurrency: RELAY_CONCURRENCY }
          ).pipe(
            // What was relayed is reported whoever owns the partition now: not sent again.
            Effect.map(Arr.getSomes),
            Effect.flatMap((outcomes) => outcomes.length === 0 ? Effect.void : client.send(MailerKind, partnerId, new MailRelayed({ outcomes }, true))),
            Effect.catchAll((error) => Effect.logWarning("mailer outcomes not recorded: the recipients are tried again", { partner_id: partnerId, error: String(error) })),
            Effect.forkDaemon,
            Effect.asVoid
          )
        )
        const next = Math.max(now, state.nextSlotAt) + Math.ceil((due.length * 1000) / rate)
        return flushAt(ctx, { ...idle, nextSlotAt: next }, next)
      }),

    MailRelayed: (state, command, ctx) =>
      Effect.gen(function*() {
        const config = yield* AppConfig
        const ledger = yield* MailLedger
        const now = Date.now()
        yield* ledger.settle(ctx, ctx.key, command.outcomes, config.emailRetryBaseMs)
        // Outcomes change what is due (a retry's time, a slot under the bound): look again.
        return flushAt(ctx, { ...state, dirty: true }, Math.max(now, state.nextSlotAt))
      }),

    MailFeedback: (state, command, ctx) =>
      Effect.gen(function*() {
        const ledger = yield* MailLedger
        yield* ledger.feedback(ctx, ctx.key, command)
        return state
      })
  }
})

/**
 * A partner's quota and rate, read at most once a second per process: an operator's change
 * (`herald admin email-quota`, a grant) applies within a second, and a burst of sends does not
 * read the same row for each.
 */
const limits = new Map<string, { readonly max: number; readonly rate: number; readonly at: number }>()
const limitsOf = (partnerId: string) =>
  Effect.gen(function*() {
    const hit = limits.get(partnerId)
    if (hit !== undefined && Date.now() - hit.at < 1_000) return hit
    const row = yield* (yield* PartnersRepo).limits(partnerId)
    const fresh = { max: row?.max24HourSend ?? 0, rate: Math.max(1, row?.maxSendRate ?? 1), at: Date.now() }
    if (limits.size >= 10_000) limits.clear()
    limits.set(partnerId, fresh)
    return fresh
  })

const mailOf = (row: DueRecipient, dkim: OutgoingMail["dkim"]): OutgoingMail => ({
  messageId: row.messageId,
  from: row.fromAddress,
  recipient: row.recipient,
  to: row.toAddresses,
  cc: row.ccAddresses,
  replyTo: row.replyTo,
  subject: row.subject,
  text: row.textBody ?? undefined,
  html: row.htmlBody ?? undefined,
  dkim
})

const outcomeOf = (row: DueRecipient, outcome: RelayOutcome): typeof Outcome.Type => ({
  messageId: row.messageId,
  recipient: row.recipient,
  attempts: row.attempts + 1,
  tag: outcome._tag,
  response: outcome.response.slice(0, 500)
})
