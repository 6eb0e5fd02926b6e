import { Effect, Layer } from "effect"
import { BroadcastReports, type TargetStatusReport } from "../messaging/BroadcastReports.ts"
import { MessageBatches } from "../webhooks/MessageBatches.ts"
import { BroadcastTargets } from "./BroadcastTargets.ts"
import { BroadcastProgress } from "./progress.ts"

/**
 * Gateway reports about broadcasts' messages (the BroadcastReports port of messaging/GatewayReports):
 * the target takes the reported status (BroadcastTargets.applyReport, with its counters and
 * charge), and its message.* event goes, in the report's transaction, to the batches of the
 * endpoints that opted in to broadcast messages (none for most accounts: nothing more is written).
 * After the commit, the broadcast's live progress and the batches are woken.
 */
export const TargetReportsLive = Layer.effect(
  BroadcastReports,
  Effect.gen(function*() {
    const broadcasts = yield* BroadcastTargets
    const progress = yield* BroadcastProgress
    const batches = yield* MessageBatches

    const apply = (report: TargetStatusReport) =>
      Effect.gen(function*() {
        const result = yield* broadcasts.applyReport({ messageId: report.messageId, status: report.status, at: new Date(report.at), error: report.error })
        if (result.outcome !== "applied") return result.outcome === "unknown" ? "unknown_message" as const : result.outcome
        // A campaign's messages (no bot) have no batched message events yet (docs/campaigns.md).
        const listeners = result.botId === null ? [] : yield* batches.listeners(result.accountId, result.botId)
        const about = { message_id: report.messageId, bot_id: result.botId, to: result.phone, broadcast_id: result.broadcastId }
        const reported = { ...about, status: result.status, occurred_at: new Date(report.at).toISOString() }
        const staged = listeners.length > 0 && (yield* batches.stage({
          listeners,
          accountId: result.accountId,
          broadcastId: result.broadcastId,
          botId: result.botId ?? "",
          occurredAt: new Date(report.at),
          events: [
            // A target in doubt (claimed, unconfirmed, failed as not confirmed) that the report shows
            // reached the recipient is counted sent now: its message.sent comes now too.
            ...(result.countedSent ? [{ type: "message.sent", data: { ...about, status: "sent" } }] : []),
            { type: `message.${result.status}`, data: report.error === undefined ? reported : { ...report.error, ...reported } }
          ]
        }))
        return { accountId: result.accountId, broadcastId: result.broadcastId, staged }
      })

    const applied = (result: { readonly accountId: string; readonly broadcastId: string; readonly staged: boolean }) =>
      Effect.gen(function*() {
        yield* progress.changed(result.accountId, result.broadcastId)
        if (result.staged) yield* batches.staged
      })

    return { apply, applied }
  })
).pipe(Layer.provide(Layer.mergeAll(BroadcastTargets.Default, BroadcastProgress.Default, MessageBatches.Default)))
