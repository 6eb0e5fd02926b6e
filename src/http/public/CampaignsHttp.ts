import { Effect, Layer } from "effect"
import type { CampaignRow, TargetRow } from "../../broadcasts/BroadcastsRepo.ts"
import { type CampaignInput, Campaigns } from "../../campaigns/Campaigns.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentAccount } from "../app/AppAuthentication.ts"
import { presentPage } from "../page.ts"

const iso = (at: Date | null) => (at === null ? null : at.toISOString())

/** A campaign as both surfaces answer it (CampaignsApi's Campaign). */
export const presentCampaign = (row: CampaignRow) => {
  const done = row.sentCount + row.failedCount + row.cancelledCount + row.skippedCount
  return {
    id: row.broadcastId,
    name: row.name,
    status: row.status,
    phone_number_id: row.phoneNumberId,
    template: row.content.data,
    category: row.content.category,
    fallback_values: row.variables ?? {},
    audience: row.audience.kind === "customers"
      ? { customer_ids: row.audience.ids }
      : row.audience.kind === "retry"
      ? { retry_of: row.audience.of }
      : { segment_id: row.audience.segmentId, filters: row.audience.filters, tags: row.audience.tags },
    scheduled_at: iso(row.scheduledAt),
    counters: {
      total: row.totalCount,
      sent: row.sentCount,
      delivered: row.deliveredCount,
      read: row.readCount,
      failed: row.failedCount,
      skipped: row.skippedCount,
      // Not sent yet: everything counted at the start without an outcome. Unconfirmed targets
      // are neither (they left) and stay out of every count until their status or the expiry.
      waiting: row.status === "running" ? Math.max(0, row.totalCount - done) : 0,
      cancelled: row.cancelledCount
    },
    created_at: row.createdAt.toISOString(),
    started_at: iso(row.startedAt),
    completed_at: iso(row.completedAt),
    cancelled_at: iso(row.cancelledAt)
  }
}

// The Gateway error record whole, as the public API's messages carry it.
const presentTarget = (row: TargetRow) => {
  const error = row.error
  return {
    target_no: row.targetNo,
    customer_id: row.customerId ?? "",
    phone: row.phone,
    message_id: row.messageId,
    status: row.status,
    error,
    sent_at: iso(row.sentAt),
    delivered_at: iso(row.deliveredAt),
    read_at: iso(row.readAt),
    failed_at: iso(row.failedAt)
  }
}

const answered = <E, R>(row: Effect.Effect<CampaignRow, E, R>) =>
  Effect.map(row, (campaign) => ({ result: true as const, success: true as const, campaign: presentCampaign(campaign) }))

/** What both groups answer, from the one service: each group's handlers call these. */
const campaignAnswers = Effect.map(Campaigns, (campaigns) => ({
  create: (payload: CampaignInput) => Effect.flatMap(CurrentAccount, (account) => answered(campaigns.create(account.accountId, payload))),
  list: (urlParams: Parameters<Campaigns["list"]>[1]) =>
    Effect.flatMap(CurrentAccount, (account) =>
      Effect.map(campaigns.list(account.accountId, urlParams), (page) => ({
        result: true as const,
        ...presentPage("campaigns", { items: page.rows, nextCursor: page.nextCursor }, presentCampaign)
      }))),
  get: (id: string) => Effect.flatMap(CurrentAccount, (account) => answered(campaigns.get(account.accountId, id))),
  targets: (id: string, urlParams: Parameters<Campaigns["targets"]>[2]) =>
    Effect.flatMap(CurrentAccount, (account) =>
      Effect.map(campaigns.targets(account.accountId, id, urlParams), (page) => ({
        result: true as const,
        ...presentPage("targets", { items: page.rows, nextCursor: page.nextCursor }, presentTarget)
      }))),
  cancel: (id: string) => Effect.flatMap(CurrentAccount, (account) => answered(campaigns.cancel(account.accountId, id))),
  retryFailed: (id: string) => Effect.flatMap(CurrentAccount, (account) => answered(campaigns.retryFailed(account.accountId, id)))
}))

const PublicCampaignsHttpLive = apiGroup(HeraldApi, "publicCampaigns", (handlers) =>
  Effect.map(campaignAnswers, (answer) =>
    handlers
      .handle("createCampaign", ({ payload }) => answer.create(payload))
      .handle("listCampaigns", ({ urlParams }) => answer.list(urlParams))
      .handle("getCampaign", ({ path }) => answer.get(path.id))
      .handle("listCampaignTargets", ({ path, urlParams }) => answer.targets(path.id, urlParams))
      .handle("cancelCampaign", ({ path }) => answer.cancel(path.id))
      .handle("retryFailedCampaign", ({ path }) => answer.retryFailed(path.id))))

const AppCampaignsHttpLive = apiGroup(HeraldApi, "appCampaigns", (handlers) =>
  Effect.map(campaignAnswers, (answer) =>
    handlers
      .handle("createCampaign", ({ payload }) => answer.create(payload))
      .handle("listCampaigns", ({ urlParams }) => answer.list(urlParams))
      .handle("getCampaign", ({ path }) => answer.get(path.id))
      .handle("listCampaignTargets", ({ path, urlParams }) => answer.targets(path.id, urlParams))
      .handle("cancelCampaign", ({ path }) => answer.cancel(path.id))
      .handle("retryFailedCampaign", ({ path }) => answer.retryFailed(path.id))))

/** The campaign handlers of both surfaces (one service, one presenter). */
export const CampaignsHttpLive = Layer.mergeAll(PublicCampaignsHttpLive, AppCampaignsHttpLive)
