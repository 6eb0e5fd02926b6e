import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BroadcastsRepo } from "../broadcasts/BroadcastsRepo.ts"
import { BroadcastProgress } from "../broadcasts/progress.ts"
import { isUuid } from "../domain/ids.ts"
import type { GatewayReport } from "../gateway/RcsGateway.ts"
import { BotsRepo } from "../bots/BotsRepo.ts"
import { PreparedStatements } from "../storage/PreparedStatements.ts"
import { MessageBatches } from "../webhooks/MessageBatches.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { CHARGE_ONCE_PREPARED, refundCharge } from "../wallet/ledgerWrites.ts"

type StatusReport = Extract<GatewayReport, { _tag: "Status" }>
type InboundReport = Extract<GatewayReport, { _tag: "Inbound" }>

/**
 * The data of an RCS `message.received` event: the RCS events' names (message_id, bot_id, the
 * number in E.164 as `from`, as `to` in the message.* events) and the WhatsApp `message.received`'s
 * fields (channel, type, text, received_at). `message_id` is the gateway's id of the user's message;
 * `type` is `text`, or `suggestion_response` when the user tapped a suggestion (its postback_data).
 */
export const receivedData = (botId: string, report: InboundReport) => ({
  message_id: report.messageId,
  channel: "rcs" as const,
  bot_id: botId,
  from: report.phone,
  type: report.postbackData === undefined ? "text" as const : "suggestion_response" as const,
  text: report.text,
  postback_data: report.postbackData ?? null,
  received_at: new Date(report.at).toISOString()
})

/** What became of a report: applied, already known (a duplicate or a late one), or about nothing we know yet. */
export type ReportResult = "applied" | "unchanged" | "unknown_message" | "not_ours"

interface Moved {
  readonly before: string
  readonly after: string
  readonly accountId: string
  readonly botId: string
  readonly recipient: string
  readonly price: string
}

/**
 * Applies what the gateway reports about messages and users. Status reports move a message
 * forward only (the messages table's trigger refuses a step back, so a late "delivered" never
 * undoes "read", whoever writes); each real change emits its message.* event, and a delivery
 * report charges the message if nothing did yet (an unconfirmed send is charged when its delivery
 * is reported, never otherwise). Charges are unique per message, so duplicated callbacks never
 * charge twice. Everything of one report is one transaction, the status history included (a
 * trigger on messages writes it: migration 0024). A user's message is stored once and emits its
 * `message.received` in the same transaction.
 */
export class GatewayReports extends Effect.Service<GatewayReports>()("herald/messaging/GatewayReports", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const webhooks = yield* Webhooks
    const bots = yield* BotsRepo
    const broadcasts = yield* BroadcastsRepo
    const progress = yield* BroadcastProgress
    const prepared = yield* PreparedStatements
    const batches = yield* MessageBatches

    // Every send gets status reports (delivered, read): these two are prepared statements. They run
    // in the report's transaction (on its connection).
    const moveMessage = prepared.prepare<Moved>(`
        WITH prev AS (SELECT message_id, status FROM messages WHERE message_id = $1::uuid FOR UPDATE)
        UPDATE messages m SET
          status = $2,
          delivered_at = CASE WHEN $3 IN ('delivered', 'read') THEN $4::timestamptz END,
          read_at = CASE WHEN $5 = 'read' THEN $6::timestamptz END,
          failed_at = CASE WHEN $7 = 'failed' THEN $8::timestamptz END,
          error = $9::jsonb
        FROM prev WHERE m.message_id = prev.message_id
        RETURNING prev.status AS before, m.status AS after, m.account_id, m.bot_id, m.recipient, m.price::text`)
    const chargeMessage = prepared.prepare(CHARGE_ONCE_PREPARED)

    const move = (report: StatusReport) => {
      const at = new Date(report.at).toISOString()
      const status = report.status
      return moveMessage([report.messageId, status, status, at, status, at, status, at, report.error === undefined ? null : JSON.stringify(report.error)])
    }

    const applyStatus = (report: StatusReport): Effect.Effect<ReportResult> =>
      // Herald's message ids are uuids: another id is about a message Herald never sent.
      !isUuid(report.messageId) ? Effect.succeed("not_ours" as const) : Effect.gen(function*() {
        const result = yield* applyCommitted(report)
        if (typeof result === "string") return result
        // A broadcast's target moved: its live progress, after the commit (never a count that did not happen).
        yield* progress.changed(result.accountId, result.broadcastId)
        if (result.staged) yield* batches.staged
        return "applied" as const
      })

    const applyCommitted = (report: StatusReport) =>
      webhooks.committed(Effect.gen(function*() {
        const [moved] = yield* move(report)
        if (moved === undefined) {
          // Not a single send: perhaps one of a broadcast's. Its message.* event goes, in this
          // transaction, to the batches of the endpoints that opted in to broadcast messages
          // (none for most accounts: nothing more is written).
          const result = yield* broadcasts.applyReport({ messageId: report.messageId, status: report.status, at: new Date(report.at), error: report.error })
          if (result.outcome !== "applied") return result.outcome === "unknown" ? "unknown_message" as const : result.outcome
          const listeners = yield* batches.listeners(result.accountId, result.botId)
          const about = { message_id: report.messageId, bot_id: result.botId, to: result.phone, broadcast_id: result.broadcastId }
          const reported = { ...about, status: result.status, occurred_at: new Date(report.at).toISOString() }
          const staged = listeners.length > 0 && (yield* batches.stage({
            listeners,
            accountId: result.accountId,
            broadcastId: result.broadcastId,
            botId: result.botId,
            occurredAt: new Date(report.at),
            events: [
              // A target in doubt (claimed, unconfirmed, failed as not confirmed) that the report shows
              // reached the recipient is counted sent now: its message.sent comes now too.
              ...(result.countedSent ? [{ type: "message.sent", data: { ...about, status: "sent" } }] : []),
              { type: `message.${result.status}`, data: report.error === undefined ? reported : { ...report.error, ...reported } }
            ]
          }))
          return { ...result, staged }
        }
        const reached = moved.after === "delivered" || moved.after === "read"
        if (reached) {
          yield* chargeMessage([moved.accountId, moved.price, report.messageId])
        }
        if (moved.after === "failed" && moved.before !== "failed") {
          // Not prepared: a refund is rare.
          // Rejected after the gateway took it: the charge made on acceptance is given back.
          yield* refundCharge(sql, moved.accountId, report.messageId)
        }
        if (moved.after === moved.before || moved.after !== report.status) return "unchanged" as const
        const about = { message_id: report.messageId, bot_id: moved.botId, to: moved.recipient, status: moved.after, occurred_at: new Date(report.at).toISOString() }
        yield* webhooks.emit({
          accountId: moved.accountId,
          type: `message.${report.status}`,
          botId: moved.botId,
          data: report.error === undefined ? about : { ...report.error, ...about }
        })
        return "applied" as const
      })).pipe(Effect.orDie)

    /**
     * Stores a user's message once (upstream repeats callbacks: the gateway's message id is the
     * key) and, in the same transaction, emits its `message.received`: exactly one event per
     * inbound message, and none unless it is stored. The bot when the message is new, else
     * undefined.
     */
    const recordInbound = (report: InboundReport) =>
      Effect.gen(function*() {
        const bot = yield* bots.findById(report.agentId)
        if (bot === undefined) return undefined
        const receivedAt = new Date(report.at).toISOString()
        const isNew = yield* webhooks.committed(Effect.gen(function*() {
          const inserted = yield* sql`
            INSERT INTO inbound_messages (bot_id, upstream_id, account_id, sender, text, postback_data, received_at)
            VALUES (${bot.botId}, ${report.messageId}, ${bot.accountId}, ${report.phone}, ${report.text}, ${report.postbackData ?? null},
                    ${receivedAt}::timestamptz)
            ON CONFLICT DO NOTHING
            RETURNING upstream_id`
          if (inserted.length === 0) return false
          yield* webhooks.emit({ accountId: bot.accountId, type: "message.received", botId: bot.botId, data: receivedData(bot.botId, report) })
          return true
        })).pipe(Effect.orDie)
        return isNew ? bot : undefined
      })

    return { applyStatus, recordInbound } as const
  }),
  dependencies: [BotsRepo.Default, BroadcastsRepo.Default, BroadcastProgress.Default, PreparedStatements.Default, MessageBatches.Default]
}) {}
