import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Outbox } from "../actors/runtime/index.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { botInScope, mayWrite, requireRole, seesAllBots } from "../domain/access.ts"
import { BotNotInScope, Conflict, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import type { Principal } from "../domain/signIn.ts"
import { activeBot } from "../messaging/activeBot.ts"
import { InsufficientBalance } from "../messaging/errors.ts"
import { ContactListsRepo } from "../contacts/ContactListsRepo.ts"
import { BotsCache } from "../bots/BotsCache.ts"
import { canBroadcast } from "../bots/BotsRepo.ts"
import { isIntegerKey } from "../storage/keyCursor.ts"
import { checkDefaults, placeholdersOf } from "../templates/placeholders.ts"
import { TemplatesRepo } from "../templates/TemplatesRepo.ts"
import { Wallet } from "../wallet/Wallet.ts"
import { BroadcastKind, Cancel, Start } from "./BroadcastKind.ts"
import { BroadcastsRepo, type BroadcastStatus, type TargetStatus } from "./BroadcastsRepo.ts"
import { BroadcastTargets, RETRY_CATEGORIES } from "./BroadcastTargets.ts"
import { BotNotPromotional } from "./errors.ts"
import { type CursorScope, ListCursors } from "../storage/ListCursors.ts"

export const PAGE_LIMIT_DEFAULT = 100
export const PAGE_LIMIT_MAX = 1000

/** The cursors of the account's broadcasts and of one broadcast's targets (REST's and GraphQL's alike). */
export const broadcastsScope = (accountId: string): CursorScope => ({ list: "broadcasts", accountId })
export const targetsScope = (accountId: string, broadcastId: string): CursorScope => ({ list: `broadcast-targets:${broadcastId}`, accountId })

export interface CreateInput {
  readonly name: string
  readonly botId: string
  readonly templateId: string
  readonly listId: string
  readonly scheduledAt: Date | undefined
  /** Default values of the template's placeholders (docs/broadcasts.md, Personalisation). */
  readonly variables?: Readonly<Record<string, string>> | undefined
}


/**
 * Broadcasts as the API offers them (docs/broadcasts.md), as domain values (the rows, pages of
 * them): each surface presents them (REST in http/rcs/presentBroadcasts.ts, GraphQL in
 * graphql/nodes.ts). Creation checks everything a client can
 * get wrong before writing anything, then writes the broadcast and its actor's Start in one
 * transaction; the actor does the rest.
 */
export class Broadcasts extends Effect.Service<Broadcasts>()("herald/broadcasts/Broadcasts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BroadcastsRepo
    const targets = yield* BroadcastTargets
    const cursors = yield* ListCursors
    const bots = yield* BotsCache
    const templates = yield* TemplatesRepo
    const lists = yield* ContactListsRepo
    const wallet = yield* Wallet
    const outbox = yield* Outbox
    const config = yield* AppConfig

    /** Writes the broadcast and its actor's Start in one transaction, then wakes the outbox. */
    const insertAndStart = (input: Parameters<BroadcastsRepo["insert"]>[0]) =>
      Effect.gen(function*() {
        const row = yield* Effect.gen(function*() {
          const row = yield* repo.insert(input)
          yield* outbox.enqueue(BroadcastKind, row.broadcastId, new Start(), { msgId: `start-${row.broadcastId}` })
          return row
        }).pipe(sql.withTransaction, Effect.orDie)
        yield* outbox.nudge
        return row
      })

    const create = (principal: Principal, input: CreateInput) =>
      Effect.gen(function*() {
        yield* mayWrite.createBroadcasts(principal)
        const bot = yield* activeBot(bots, principal, input.botId)
        if (!canBroadcast(bot)) {
          return yield* new BotNotPromotional({
            message: `bot ${bot.botId} is registered for ${bot.useCase} messages, which cannot be broadcast; send them one at a time`,
            bot_use_case: bot.useCase ?? "",
            use_instead: "/api/v1/rcs/messages/send"
          })
        }
        const template = isUuid(input.templateId) ? yield* templates.usable(principal.accountId, input.templateId) : undefined
        if (template === undefined) return yield* InvalidRequest.single("template_id", "is not an approved template of this account")
        if (template.botId !== bot.botId) return yield* InvalidRequest.single("template_id", "belongs to another bot")
        const list = isUuid(input.listId) ? yield* lists.find(principal.accountId, input.listId) : undefined
        if (list === undefined) return yield* InvalidRequest.single("contact_list_id", "is not a contact list of this account")
        // Personalisation: every placeholder of the template has a default, and every default a placeholder.
        const placeholders = placeholdersOf(template.content)
        const problems = checkDefaults(placeholders, input.variables ?? {})
        if (problems.length > 0) {
          return yield* new InvalidRequest({
            message: problems.map((p) => `${p.path} ${p.message}`).join("; "),
            errors: problems.map((p) => new FieldIssue(p))
          })
        }
        const price = config.messagePrice
        const cost = price * list.contactCount
        const balance = yield* wallet.balanceFor(principal.accountId, cost)
        if (balance < cost) {
          return yield* new InsufficientBalance({
            message: `the wallet balance ${balance.toFixed(2)} does not cover ${list.contactCount} messages at ${price.toFixed(2)} (${cost.toFixed(2)})`,
            balance,
            price: cost
          })
        }
        return yield* insertAndStart({
          accountId: principal.accountId,
          botId: bot.botId,
          templateId: input.templateId,
          listId: list.listId,
          name: input.name,
          content: template.content,
          // Only the template's placeholders: checkDefaults refused any other name.
          variables: placeholders.length === 0 ? null : { ...input.variables },
          price,
          scheduledAt: input.scheduledAt ?? null
        })
      })

    /** The broadcast if the caller may see it: 404 when it is not the account's, 403 off-scope. */
    const visible = (principal: Principal, broadcastId: string) =>
      Effect.gen(function*() {
        const row = isUuid(broadcastId) ? yield* repo.find(principal.accountId, broadcastId) : undefined
        if (row === undefined) return yield* new NotFound({ message: `no broadcast ${broadcastId}` })
        if (!botInScope(principal, row.botId)) return yield* BotNotInScope.instance()
        return row
      })

    const get = (principal: Principal, broadcastId: string) => visible(principal, broadcastId)

    const list = (principal: Principal, params: { limit?: number | undefined; cursor?: string | undefined; status?: BroadcastStatus | undefined }) =>
      Effect.gen(function*() {
        const limit = Math.min(params.limit ?? PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX)
        const scope = broadcastsScope(principal.accountId)
        const after = yield* cursors.readPosition(scope, params.cursor)
        const rows = yield* repo.page(principal.accountId, {
          after,
          limit,
          bots: seesAllBots(principal) ? undefined : principal.bots,
          status: params.status
        })
        return cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.broadcastId }))
      })

    const targetsOf = (principal: Principal, broadcastId: string, params: { limit?: number | undefined; cursor?: string | undefined; status?: TargetStatus | undefined }) =>
      Effect.gen(function*() {
        const row = yield* visible(principal, broadcastId)
        const limit = Math.min(params.limit ?? PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX)
        const scope = targetsScope(principal.accountId, row.broadcastId)
        const before = yield* cursors.readKey(scope, params.cursor, isIntegerKey)
        return cursors.keyPage(scope, yield* repo.targets(broadcastId, { before, limit, statuses: params.status === undefined ? undefined : [params.status] }), limit, (target) => target.targetNo)
      })

    const cancel = (principal: Principal, broadcastId: string) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "cancel broadcasts")
        const row = yield* visible(principal, broadcastId)
        const cancelled = yield* Effect.gen(function*() {
          if (!(yield* repo.markCancelled(principal.accountId, broadcastId))) return false
          yield* outbox.enqueue(BroadcastKind, broadcastId, new Cancel(), { msgId: `cancel-${broadcastId}` })
          return true
        }).pipe(sql.withTransaction, Effect.orDie)
        if (!cancelled) return yield* new Conflict({ key: "status", message: `broadcast ${broadcastId} is ${row.status} already` })
        yield* outbox.nudge
        return yield* get(principal, broadcastId)
      })

    /**
     * A new broadcast over this one's targets that failed with a retry category (RETRY_CATEGORIES:
     * the gateway's own failures and throughput refusals), once it has finished: same bot,
     * template, content and defaults, each target's phone and values as they were.
     */
    const retryFailed = (principal: Principal, broadcastId: string) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "retry broadcasts")
        const row = yield* visible(principal, broadcastId)
        if (row.status !== "completed" && row.status !== "cancelled") {
          return yield* new Conflict({ key: "status", message: `broadcast ${broadcastId} is ${row.status}: retry its failed targets once it has completed or been cancelled` })
        }
        const { total } = yield* targets.snapshotRetry(row.broadcastId).pipe(Effect.orDie)
        if (total === 0) {
          return yield* new Conflict({ key: "targets", message: `broadcast ${broadcastId} has no target that failed with a category worth retrying (${RETRY_CATEGORIES.join(", ")})` })
        }
        const header = yield* repo.header(row.broadcastId).pipe(Effect.orDie)
        if (header === undefined) return yield* new NotFound({ message: `no broadcast ${broadcastId}` })
        const price = config.messagePrice
        const cost = price * total
        const balance = yield* wallet.balanceFor(principal.accountId, cost)
        if (balance < cost) {
          return yield* new InsufficientBalance({
            message: `the wallet balance ${balance.toFixed(2)} does not cover ${total} messages at ${price.toFixed(2)} (${cost.toFixed(2)})`,
            balance,
            price: cost
          })
        }
        const suffix = " (retry)"
        return yield* insertAndStart({
          accountId: principal.accountId,
          botId: row.botId,
          templateId: row.templateId,
          listId: row.listId,
          name: row.name.slice(0, 200 - suffix.length) + suffix,
          content: header.content,
          variables: header.variables,
          price,
          scheduledAt: null,
          retryOf: row.broadcastId
        })
      })

    return { create, get, list, targets: targetsOf, cancel, retryFailed } as const
  }),
  dependencies: [BroadcastsRepo.Default, BroadcastTargets.Default, BotsCache.Default, TemplatesRepo.Default, ContactListsRepo.Default, Wallet.Default, ListCursors.Default]
}) {}
