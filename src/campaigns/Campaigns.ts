import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { Outbox } from "../actors/runtime/index.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { BroadcastKind, Cancel, Start } from "../broadcasts/BroadcastKind.ts"
import { type Audience, type BroadcastStatus, BroadcastsRepo, type CampaignRow, type CampaignTemplate, type TargetStatus, type WrittenFilter } from "../broadcasts/BroadcastsRepo.ts"
import { audienceCondition, BroadcastTargets, RETRY_CATEGORIES } from "../broadcasts/BroadcastTargets.ts"
import { checkFallbacks, fillTraits, traitsIn } from "../broadcasts/campaignValues.ts"
import { Conflict, describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { InsufficientBalance } from "../messaging/errors.ts"
import { parseCustomerQuery } from "../customers/traitFilters.ts"
import { SegmentsRepo } from "../segments/SegmentsRepo.ts"
import { isIntegerKey } from "../storage/keyCursor.ts"
import { type CursorScope, ListCursors } from "../storage/ListCursors.ts"
import { Wallet } from "../wallet/Wallet.ts"
import { NoWaNumber } from "../whatsapp/errors.ts"
import { WaNumbers } from "../whatsapp/numbers/WaNumbers.ts"
import { buildTemplateSend } from "../whatsapp/templates/templateValues.ts"
import type { TemplateCategory } from "../whatsapp/templates/templateRules.ts"
import { WaTemplatesRepo } from "../whatsapp/templates/WaTemplatesRepo.ts"
import { approvedTemplate } from "../whatsapp/templates/approvedTemplate.ts"

export const CAMPAIGNS_LIMIT_DEFAULT = 50
export const CAMPAIGNS_LIMIT_MAX = 1_000
/** The most customers a campaign may name by id (a larger audience is a segment or a query). */
export const MAX_AUDIENCE_IDS = 10_000
export const CAMPAIGN_NAME_MAX = 200

export const campaignsScope = (accountId: string): CursorScope => ({ list: "campaigns", accountId })
export const campaignTargetsScope = (accountId: string, campaignId: string): CursorScope => ({ list: `campaign-targets:${campaignId}`, accountId })

/** A campaign as a client asks for it (POST /api/v1/public/campaigns, /api/v1/app/campaigns). */
export interface CampaignInput {
  readonly name: string
  readonly phoneNumberId?: string | undefined
  /** As a Template send's data: {name, languageCode, headerValues?, bodyValues?, buttonValues?}, values may hold {{trait.x}}. */
  readonly template: CampaignTemplate
  readonly fallbackValues?: Readonly<Record<string, string>> | undefined
  readonly audience: {
    readonly segment_id?: string | undefined
    readonly filters?: unknown
    readonly tags?: unknown
    readonly customer_ids?: ReadonlyArray<string> | undefined
  }
  readonly scheduled_at?: Date | undefined
}

/** The audience as given, or every problem with it (exactly one of a segment, a query, customer ids). */
const audienceOf = (accountId: string, input: CampaignInput["audience"], segments: SegmentsRepo) =>
  Effect.gen(function*() {
    const given = [input.segment_id !== undefined, input.filters !== undefined || input.tags !== undefined, input.customer_ids !== undefined]
    if (given.filter(Boolean).length !== 1) {
      return { audience: undefined, issues: [new FieldIssue({ path: "audience", message: "give exactly one of segment_id, filters and tags (a customer search), or customer_ids" })] }
    }
    if (input.segment_id !== undefined) {
      const segment = yield* segments.find(accountId, input.segment_id)
      if (segment === undefined) return { audience: undefined, issues: [new FieldIssue({ path: "audience.segment_id", message: "is not a segment of this account" })] }
      // Its filters were checked when the segment was saved.
      const audience: Audience = { kind: "query", filters: segment.filters as ReadonlyArray<WrittenFilter>, tags: segment.tags, segmentId: segment.segmentId }
      return { audience, issues: undefined }
    }
    if (input.customer_ids !== undefined) {
      const ids = input.customer_ids
      if (ids.length === 0 || ids.length > MAX_AUDIENCE_IDS) {
        return { audience: undefined, issues: [new FieldIssue({ path: "audience.customer_ids", message: `must list 1 to ${MAX_AUDIENCE_IDS.toLocaleString("en")} customer ids` })] }
      }
      const bad = ids.flatMap((id, i) => (isUuid(id) ? [] : [new FieldIssue({ path: `audience.customer_ids[${i}]`, message: "is not a customer id" })]))
      if (bad.length > 0) return { audience: undefined, issues: bad }
      const audience: Audience = { kind: "customers", ids: [...new Set(ids.map((id) => id.toLowerCase()))] }
      return { audience, issues: undefined }
    }
    const query = parseCustomerQuery({ filters: input.filters, tags: input.tags })
    if ("issues" in query) return { audience: undefined, issues: query.issues.map((i) => new FieldIssue({ path: `audience.${i.path}`, message: i.message })) }
    const audience: Audience = { kind: "query", filters: (input.filters as ReadonlyArray<WrittenFilter> | undefined) ?? [], tags: query.tags, segmentId: null }
    return { audience, issues: undefined }
  })

/**
 * WhatsApp campaigns (docs/campaigns.md): an approved template sent from one of the account's
 * numbers to an audience of its customers, on the broadcast engine (a broadcast of channel
 * whatsapp: the same actor, chunks, claims and counters as an RCS broadcast). Creation checks
 * everything a client can get wrong before writing anything, then writes the campaign and its
 * actor's Start in one transaction; the actor freezes the audience when it starts and the
 * number's sender sends the chunks at the number's tier.
 */
export class Campaigns extends Effect.Service<Campaigns>()("herald/campaigns/Campaigns", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BroadcastsRepo
    const targets = yield* BroadcastTargets
    const numbers = yield* WaNumbers
    const templates = yield* WaTemplatesRepo
    const segments = yield* SegmentsRepo
    const wallet = yield* Wallet
    const cursors = yield* ListCursors
    const outbox = yield* Outbox
    const config = yield* AppConfig

    /** The category's price, once the wallet covers `count` messages at it (402 otherwise). */
    const covered = (accountId: string, count: number, category: TemplateCategory) =>
      Effect.gen(function*() {
        const price = config.waPrices[category]
        const cost = price * count
        if (cost === 0) return price
        const balance = yield* wallet.balanceFor(accountId, cost)
        if (balance < cost) {
          return yield* new InsufficientBalance({
            message: `the wallet balance ${balance.toFixed(2)} does not cover ${count} ${category} messages at ${price.toFixed(2)} (${cost.toFixed(2)})`,
            balance,
            price: cost
          })
        }
        return price
      })

    /** Writes the campaign and its actor's Start in one transaction, then wakes the outbox. */
    const insertAndStart = (input: Parameters<BroadcastsRepo["insertCampaign"]>[0]) =>
      Effect.gen(function*() {
        const row = yield* Effect.gen(function*() {
          const row = yield* repo.insertCampaign(input)
          yield* outbox.enqueue(BroadcastKind, row.broadcastId, new Start(), { msgId: `start-${row.broadcastId}` })
          return row
        }).pipe(sql.withTransaction, Effect.orDie)
        yield* outbox.nudge
        return row
      })

    const create = (accountId: string, input: CampaignInput) =>
      Effect.gen(function*() {
        const number = yield* numbers.sender(accountId, input.phoneNumberId)
        if (number === undefined) {
          if (input.phoneNumberId !== undefined) return yield* InvalidRequest.single("phoneNumberId", "is not a WhatsApp number of this account")
          return yield* new NoWaNumber({ message: "this account has no WhatsApp number to send from; ask the platform operator to onboard one" })
        }
        const issues: Array<FieldIssue> = []
        if (input.name.trim() === "" || input.name.length > CAMPAIGN_NAME_MAX) {
          issues.push(new FieldIssue({ path: "name", message: `must be 1 to ${CAMPAIGN_NAME_MAX} characters` }))
        }
        const { name, languageCode } = input.template as { name?: unknown; languageCode?: unknown }
        if (typeof name !== "string" || name === "") issues.push(new FieldIssue({ path: "template.name", message: "must be the template's name" }))
        if (typeof languageCode !== "string" || languageCode === "") {
          issues.push(new FieldIssue({ path: "template.languageCode", message: "must be the template's language code, e.g. en or en_US" }))
        }
        const chosen = yield* audienceOf(accountId, input.audience, segments)
        if (chosen.issues !== undefined) issues.push(...chosen.issues)
        if (issues.length > 0 || chosen.audience === undefined) return yield* new InvalidRequest({ message: describeIssues(issues), errors: issues })
        const template = yield* approvedTemplate(templates, accountId, name as string, languageCode as string)
        // Per-recipient values: every {{trait.x}} has a fallback, and the values filled with the
        // fallbacks are what the template asks for (a customer's own trait is checked when sent).
        const traits = traitsIn(input.template)
        const fallbacks = input.fallbackValues ?? {}
        const valueIssues = [...checkFallbacks(traits, fallbacks)]
        if (valueIssues.length === 0) {
          const built = buildTemplateSend(template.definition, fillTraits(input.template, null, fallbacks), { allowHttpMedia: config.mediaAllowHttp })
          if ("issues" in built) valueIssues.push(...built.issues.map((i) => new FieldIssue({ path: i.path.replace(/^data/, "template"), message: i.message })))
        }
        if (valueIssues.length > 0) return yield* new InvalidRequest({ message: describeIssues(valueIssues), errors: valueIssues })
        const size = (yield* targets.snapshotAudience(accountId, audienceCondition(chosen.audience)).pipe(Effect.orDie)).total
        const price = yield* covered(accountId, size, template.category)
        const now = yield* Clock.currentTimeMillis
        const scheduledAt = input.scheduled_at !== undefined && input.scheduled_at.getTime() > now ? input.scheduled_at : null
        return yield* insertAndStart({
          accountId,
          phoneNumberId: number.phoneNumberId,
          templateId: template.templateId,
          name: input.name,
          content: { data: input.template, definition: template.definition, category: template.category },
          audience: chosen.audience,
          variables: traits.length === 0 ? null : Object.fromEntries(traits.map((t) => [t, fallbacks[t]!])),
          price,
          scheduledAt
        })
      })

    const get = (accountId: string, campaignId: string) =>
      Effect.gen(function*() {
        const row = isUuid(campaignId) ? yield* repo.findCampaign(accountId, campaignId) : undefined
        if (row === undefined) return yield* new NotFound({ message: `no campaign ${campaignId}` })
        return row
      })

    const list = (accountId: string, params: { limit?: number | undefined; cursor?: string | undefined; status?: BroadcastStatus | undefined }) =>
      Effect.gen(function*() {
        const limit = Math.min(params.limit ?? CAMPAIGNS_LIMIT_DEFAULT, CAMPAIGNS_LIMIT_MAX)
        const scope = campaignsScope(accountId)
        const after = yield* cursors.readPosition(scope, params.cursor)
        const rows = yield* repo.campaignPage(accountId, { after, limit, status: params.status })
        return cursors.positionPage(scope, rows, limit, (row: CampaignRow) => ({ createdAt: row.position, id: row.broadcastId }))
      })

    const targetsOf = (accountId: string, campaignId: string, params: { limit?: number | undefined; cursor?: string | undefined; status?: TargetStatus | undefined }) =>
      Effect.gen(function*() {
        const row = yield* get(accountId, campaignId)
        const limit = Math.min(params.limit ?? CAMPAIGNS_LIMIT_DEFAULT, CAMPAIGNS_LIMIT_MAX)
        const scope = campaignTargetsScope(accountId, row.broadcastId)
        const before = yield* cursors.readKey(scope, params.cursor, isIntegerKey)
        const rows = yield* repo.targets(row.broadcastId, { before, limit, statuses: params.status === undefined ? undefined : [params.status] })
        return cursors.keyPage(scope, rows, limit, (target) => target.targetNo)
      })

    const cancel = (accountId: string, campaignId: string) =>
      Effect.gen(function*() {
        const row = yield* get(accountId, campaignId)
        const cancelled = yield* Effect.gen(function*() {
          if (!(yield* repo.markCancelled(accountId, row.broadcastId))) return false
          yield* outbox.enqueue(BroadcastKind, row.broadcastId, new Cancel(), { msgId: `cancel-${row.broadcastId}` })
          return true
        }).pipe(sql.withTransaction, Effect.orDie)
        if (!cancelled) return yield* new Conflict({ key: "status", message: `campaign ${campaignId} is ${row.status} already` })
        yield* outbox.nudge
        return yield* get(accountId, row.broadcastId)
      })

    /**
     * A new run over the campaign's targets that failed with a retry category (RETRY_CATEGORIES),
     * once the campaign has finished: same number, template and values, the price as it is now.
     */
    const retryFailed = (accountId: string, campaignId: string) =>
      Effect.gen(function*() {
        const source = yield* get(accountId, campaignId)
        if (source.status !== "completed" && source.status !== "cancelled") {
          return yield* new Conflict({ key: "status", message: `campaign ${campaignId} is ${source.status}: retry its failed targets once it has completed or been cancelled` })
        }
        const { total } = yield* targets.snapshotRetry(source.broadcastId).pipe(Effect.orDie)
        if (total === 0) {
          return yield* new Conflict({
            key: "targets",
            message: `campaign ${campaignId} has no target that failed with a category worth retrying (${RETRY_CATEGORIES.join(", ")})`
          })
        }
        const price = yield* covered(accountId, total, source.content.category)
        const suffix = " (retry)"
        return yield* insertAndStart({
          accountId,
          phoneNumberId: source.phoneNumberId,
          templateId: source.templateId,
          name: source.name.slice(0, CAMPAIGN_NAME_MAX - suffix.length) + suffix,
          content: source.content,
          audience: { kind: "retry", of: source.broadcastId },
          variables: source.variables,
          price,
          scheduledAt: null
        })
      })

    return { create, get, list, targets: targetsOf, cancel, retryFailed } as const
  }),
  dependencies: [BroadcastsRepo.Default, BroadcastTargets.Default, WaNumbers.Default, WaTemplatesRepo.Default, SegmentsRepo.Default, Wallet.Default, ListCursors.Default]
}) {}
