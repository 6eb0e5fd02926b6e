import { Context, type Effect } from "effect"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"
import type { GatewayReport } from "../gateway/rcs.ts"

export type StatusReport = Extract<GatewayReport, { _tag: "Status" }>

/** What a target takes from a report: an RCS gateway's, or a WhatsApp status webhook's (which also says `sent`). */
export interface TargetStatusReport {
  readonly messageId: string
  readonly status: "sent" | "delivered" | "read" | "failed"
  readonly at: number
  readonly error?: GatewayErrorRecord | undefined
}

/** A report a broadcast's target took: whose progress moved, and whether events were staged for it. */
export interface BroadcastReportApplied {
  readonly accountId: string
  readonly broadcastId: string
  readonly staged: boolean
}

/**
 * Where a status report about a message that is not a single send goes: perhaps one of a
 * broadcast's. A port declared here, beside GatewayReports, implemented by
 * broadcasts/TargetReports.ts and provided by the wiring, so messaging does not depend on
 * broadcasts.
 */
export class BroadcastReports extends Context.Tag("herald/messaging/BroadcastReports")<BroadcastReports, {
  /** In the report's transaction: applies it to the broadcast target with its message id, if any. */
  readonly apply: (report: TargetStatusReport) => Effect.Effect<"unknown_message" | "unchanged" | BroadcastReportApplied, unknown>
  /** After the commit: what an applied report publishes (live progress, the staged events' batches). */
  readonly applied: (result: BroadcastReportApplied) => Effect.Effect<void>
}>() {}
