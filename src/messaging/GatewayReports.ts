import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isUuid } from "../domain/ids.ts"
import type { GatewayReport } from "../gateway/rcs.ts"
import { BotsRepo } from "../bots/BotsRepo.ts"
import { PreparedStatements } from "../storage/PreparedStatements.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { BroadcastReports, type StatusReport } from "./BroadcastReports.ts"
import { MessagesRepo } from "./MessagesRepo.ts"
import { CHARGE_ONCE_PREPARED, refundCharge } from "../wallet/ledgerWrites.ts"

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
    const broadcastReports = yield* BroadcastReports
    const prepared = yield* PreparedStatements
    const messages = yield* MessagesRepo

    // Every send gets status reports (delivered, read): the move (MessagesRepo) and the charge are
    // prepared statements. They run in the report's transaction (on its connection).
    const chargeMessage = prepared.prepare(CHARGE_ONCE_PREPARED)

    const move = (report: StatusReport) =>
      messages.moveStatus({ messageId: report.messageId, status: report.status, at: new Date(report.at).toISOString(), error: report.error })

    const applyStatus = (report: StatusReport): Effect.Effect<ReportResult> =>
      // Herald's message ids are uuids: another id is about a message Herald never sent.
      !isUuid(report.messageId) ? Effect.succeed("not_ours" as const) : Effect.gen(function*() {
        const result = yield* applyCommitted(report)
        if (typeof result === "string") return result
        // A broadcast's target moved: its live progress, after the commit (never a count that did not happen).
        yield* broadcastReports.applied(result)
        return "applied" as const
      })

    const applyCommitted = (report: StatusReport) =>
      webhooks.committed(Effect.gen(function*() {
        const moved = yield* move(report)
        if (moved === undefined) {
          // Not a single send: perhaps one of a broadcast's (BroadcastReports, in this transaction).
          return yield* broadcastReports.apply(report)
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
          const inserted = yield* messages.insertInbound({
            botId: bot.botId,
            upstreamId: report.messageId,
            accountId: bot.accountId,
            sender: report.phone,
            text: report.text,
            postbackData: report.postbackData ?? null,
            receivedAt
          })
          if (!inserted) return false
          yield* webhooks.emit({ accountId: bot.accountId, type: "message.received", botId: bot.botId, data: receivedData(bot.botId, report) })
          return true
        })).pipe(Effect.orDie)
        return isNew ? bot : undefined
      })

    return { applyStatus, recordInbound } as const
  }),
  dependencies: [BotsRepo.Default, PreparedStatements.Default, MessagesRepo.Default, Webhooks.Default]
}) {}
