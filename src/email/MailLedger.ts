import { Effect } from "effect"
import { createHash } from "node:crypto"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { EmailMessagesRepo, insertEvent, type StoredEvent, updateRecipient } from "./EmailMessagesRepo.ts"
import { type EventType, toMillis, webhookTypeOf } from "./model.ts"
import { suppressIn } from "./SuppressionRepo.ts"

export interface NewEvent {
  readonly messageId: string
  readonly type: EventType
  readonly recipient: string | null
  readonly detail: string
}

export interface RelayedOutcome {
  readonly messageId: string
  readonly recipient: string
  readonly attempts: number
  readonly tag: "Accepted" | "Bounced" | "Deferred" | "Rejected"
  readonly response: string
}

export interface Feedback {
  readonly messageId: string
  readonly recipient: string
  readonly type: "complaint" | "bounce"
  readonly detail: string
}

// The mailer's context; the ledger only records writes through it, whatever the command.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Ctx = ActorContext<any>

/** Deferred recipients are tried again this many times (base, 3×, 9×) before a soft bounce. */
export const SOFT_RETRIES = 3

/**
 * An event's id, from what it is about: a message has one SEND, a recipient one event of each
 * type. An event recorded twice (an outcome applied again after a crash or a move of the actor)
 * is the same row, which the insert skips.
 */
const eventIdOf = (event: NewEvent) => {
  const hex = createHash("sha256").update(`${event.messageId}\n${event.recipient ?? ""}\n${event.type}`).digest("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/**
 * A timestamptz to the microsecond, `index` µs after `ms`: the events of one command keep their
 * order in the list (created_at, then id). Their webhooks carry the time as the list answers it,
 * to the millisecond (`ms` itself).
 */
const timestampOf = (ms: number, index: number) => `${new Date(ms).toISOString().slice(0, 23)}${String(index % 1000).padStart(3, "0")}Z`

/**
 * What the `mailer` actor writes, all of it in the transaction of the command that decided it:
 * events (and their deliveries to the configuration set's destinations), recipients' outcomes,
 * the messages' statuses, and the suppression rows that hard bounces and complaints add.
 */
export class MailLedger extends Effect.Service<MailLedger>()("herald/email/MailLedger", {
  effect: Effect.gen(function*() {
    const webhooks = yield* Webhooks
    const messages = yield* EmailMessagesRepo

    const record = (ctx: Ctx, partnerId: string, rows: ReadonlyArray<NewEvent>, configSetId: string | null) =>
      Effect.sync(() => {
        const now = Date.now()
        rows.forEach((row, i) => {
          const data = {
            event_id: eventIdOf(row),
            message_id: row.messageId,
            type: row.type,
            // Every field of the row, as the list and GET /emails/:id answer it: a SEND's recipient is null.
            recipient: row.recipient,
            detail: row.detail,
            created_at: toMillis(timestampOf(now, i))
          }
          const stored: StoredEvent = {
            event_id: data.event_id,
            partner_id: partnerId,
            message_id: row.messageId,
            type: row.type,
            recipient: row.recipient,
            detail: row.detail,
            created_at: timestampOf(now, i)
          }
          if (configSetId === null) {
            insertEvent(ctx, stored)
            return
          }
          // With destinations, the event goes out only if this is its first recording.
          ctx.persist(Effect.gen(function*() {
            if (!(yield* messages.insertEventOnce(stored))) return
            yield* webhooks.emit({ accountId: partnerId, type: webhookTypeOf(row.type), botId: null, data, configSetId }).pipe(
              Effect.catchTag("NatsUnavailable", Effect.die)
            )
          }))
        })
      })

    /** The relay's answers to a flush: each recipient delivered, bounced, rejected, or queued again. */
    const settle = (ctx: Ctx, partnerId: string, outcomes: ReadonlyArray<RelayedOutcome>, retryBaseMs: number) =>
      Effect.gen(function*() {
        if (outcomes.length === 0) return
        const messageIds = [...new Set(outcomes.map((o) => o.messageId))]
        const sets = yield* messages.configSetsOf(messageIds)
        // Only tries still out are settled: an outcome that comes after its recipient was settled
        // (a try made again after its first was taken for lost) changes nothing.
        const sending = yield* messages.sendingAmong(messageIds)
        const now = Date.now()
        for (const o of outcomes) {
          if (!sending.has(`${o.messageId} ${o.recipient}`)) continue
          const finalSoft = o.tag === "Deferred" && o.attempts > SOFT_RETRIES
          const status = o.tag === "Accepted" ? "delivered" : o.tag === "Rejected" ? "rejected" : o.tag === "Bounced" || finalSoft ? "bounced" : "queued"
          const retryAt = status === "queued" ? new Date(now + retryBaseMs * 3 ** (o.attempts - 1)).toISOString() : new Date(now).toISOString()
          updateRecipient(ctx, o, { status, attempts: o.attempts, nextAttemptAt: retryAt, lastResponse: o.response })
          if (status === "queued") continue
          if (status === "bounced" && !finalSoft) suppressIn(ctx, partnerId, o.recipient, "BOUNCE")
          const event: NewEvent = {
            messageId: o.messageId,
            recipient: o.recipient,
            type: status === "delivered" ? "DELIVERY" : status === "rejected" ? "REJECT" : "BOUNCE",
            detail: finalSoft ? "soft" : status === "bounced" ? `hard: ${o.response}` : o.response
          }
          yield* record(ctx, partnerId, [event], sets.get(o.messageId) ?? null)
        }
        ctx.persist(messages.restatus(messageIds))
      })

    /**
     * A report after acceptance: a complaint (after its DELIVERY, as in SES) or a late bounce. Both
     * suppress the address. A report repeated (the sink retries until Herald answers) changes nothing.
     */
    const feedback = (ctx: Ctx, partnerId: string, report: Feedback) =>
      Effect.gen(function*() {
        const row = yield* messages.recipientOf(partnerId, report.messageId, report.recipient)
        if (row === undefined || row.status !== "delivered") return
        const status = report.type === "complaint" ? "complained" : "bounced"
        // A report may come again (the sink retries until Herald answers): the first one counts.
        updateRecipient(ctx, report, { status })
        suppressIn(ctx, partnerId, report.recipient, report.type === "complaint" ? "COMPLAINT" : "BOUNCE")
        yield* record(ctx, partnerId, [{
          messageId: report.messageId,
          recipient: report.recipient,
          type: report.type === "complaint" ? "COMPLAINT" : "BOUNCE",
          detail: report.type === "complaint" ? report.detail : `hard: ${report.detail}`
        }], row.configSetId)
        ctx.persist(messages.restatus([report.messageId]))
      })

    return { record, settle, feedback } as const
  }),
  dependencies: [Webhooks.Default, EmailMessagesRepo.Default]
}) {}
