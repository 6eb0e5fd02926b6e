import { Effect, Either } from "effect"
import { botInScope, requireRole, seesAllBots } from "../domain/access.ts"
import type { MessageContent } from "../domain/content.ts"
import { checkContent, type ContentCheck, MEDIA_URL_MAX, mediaKindOfUrl, mediaOf, mediaTypeUnknownWarning } from "../domain/contentLimits.ts"
import { BotNotInScope, Conflict, NotFound } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import { BotsRepo } from "../bots/BotsRepo.ts"
import { NoActiveBot, TemplateInvalid } from "./errors.ts"
import { MediaProbe } from "./mediaProbe.ts"
import { judgeMedia } from "./mediaVerdict.ts"
import { contentOf, type TemplateFields } from "./templateInput.ts"
import { TemplatesRepo, type TemplateStatus } from "./TemplatesRepo.ts"
import { ListCursors } from "../storage/ListCursors.ts"

export const LIST_LIMIT_DEFAULT = 100
export const LIST_LIMIT_MAX = 1000

/** The simulator approves a template at once; a real gateway's review would start it `pending`. */
const INITIAL_STATUS: TemplateStatus = "approved"

export interface NewTemplate extends TemplateFields {
  readonly botId: string
  readonly name: string
}

export interface ListQuery {
  readonly botId?: string | undefined
  readonly status?: TemplateStatus | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** A media URL worth a HEAD request: well-formed, and not already refused by its extension. */
const probeable = (url: string) => url.length <= MEDIA_URL_MAX && /^https?:\/\//i.test(url) && mediaKindOfUrl(url) !== "unsupported"

/**
 * Templates (DESIGN.md, Templates): message content of one bot, checked against the RCS limits
 * and its media probed when created, then sent by id. Operators and owners write; every role
 * reads; a member scoped to bots sees and touches only its bots' templates.
 */
export class Templates extends Effect.Service<Templates>()("herald/templates/Templates", {
  effect: Effect.gen(function*() {
    const repo = yield* TemplatesRepo
    const cursors = yield* ListCursors
    const bots = yield* BotsRepo
    const media = yield* MediaProbe

    /** Read from the database, not the bots cache: a bot just activated must be usable at once. */
    const requireActiveBot = (principal: Principal, botId: string) =>
      Effect.gen(function*() {
        const bot = yield* bots.find(principal.accountId, botId)
        if (bot !== undefined && !botInScope(principal, bot.botId)) return yield* BotNotInScope.instance()
        if (bot === undefined || bot.status !== "active") return yield* NoActiveBot.instance()
      })

    /** Every limit the content breaks, its media probed in parallel; warnings the probe made moot dropped. */
    const judge = (content: MessageContent) =>
      Effect.gen(function*() {
        const limits = checkContent(content)
        const verdicts = yield* Effect.forEach(
          mediaOf(content).filter((m) => probeable(m.url)),
          (m) => Effect.map(media.probe(m.url), (outcome) => ({ path: m.path, verdict: judgeMedia(m.path, m.url, outcome) })),
          { concurrency: "unbounded" }
        )
        const moot = new Set(verdicts.filter((v) => v.verdict.typeKnown).map((v) => mediaTypeUnknownWarning(v.path)))
        return {
          errors: [...limits.errors, ...verdicts.flatMap((v) => v.verdict.errors)],
          warnings: [...limits.warnings.filter((w) => !moot.has(w)), ...verdicts.flatMap((v) => v.verdict.warnings)]
        } satisfies ContentCheck
      })

    const nameTaken = (name: string) => new Conflict({ key: "name", message: `this bot already has a template named ${name}` })

    const create = (principal: Principal, input: NewTemplate) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "create templates")
        const content = yield* Either.match(contentOf(input), { onLeft: Effect.fail, onRight: Effect.succeed })
        yield* requireActiveBot(principal, input.botId)
        // Before the media probe, which may take seconds; the unique index still decides races.
        if (yield* repo.nameTaken(input.botId, input.name)) return yield* nameTaken(input.name)
        const check = yield* judge(content)
        if (check.errors.length > 0) return yield* TemplateInvalid.of(check.errors, check.warnings)
        const row = yield* repo.insert({
          accountId: principal.accountId,
          botId: input.botId,
          name: input.name,
          content,
          status: INITIAL_STATUS,
          warnings: check.warnings
        })
        if (row === "NameTaken") return yield* nameTaken(input.name)
        return row
      }).pipe(Effect.withSpan("Templates.create"))

    /** Newest first, paged by an opaque cursor (DESIGN.md, Lists); a scoped member sees its bots' only. */
    const list = (principal: Principal, query: ListQuery) =>
      Effect.gen(function*() {
        if (query.botId !== undefined && !botInScope(principal, query.botId)) return yield* BotNotInScope.instance()
        const scope = { list: "rcs-templates", accountId: principal.accountId }
        const after = yield* cursors.readPosition(scope, query.cursor)
        const limit = Math.min(query.limit ?? LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX)
        const rows = yield* repo.page({
          accountId: principal.accountId,
          bots: seesAllBots(principal) ? "all" : principal.bots,
          botId: query.botId,
          status: query.status,
          after,
          limit
        })
        return cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.templateId }))
      }).pipe(Effect.withSpan("Templates.list"))

    /** A live template the caller may see: unknown or deleted → 404, another bot's for a scoped member → 403. */
    const visible = (principal: Principal, templateId: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(principal.accountId, templateId)
        if (row === undefined) return yield* new NotFound({ message: `no template ${templateId}` })
        if (!botInScope(principal, row.botId)) return yield* BotNotInScope.instance()
        return row
      })

    const get = (principal: Principal, templateId: string) => visible(principal, templateId)

    /** Soft delete: the template disappears from reads and can no longer be sent. */
    const remove = (principal: Principal, templateId: string) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "delete templates")
        yield* visible(principal, templateId)
        if (!(yield* repo.remove(principal.accountId, templateId))) return yield* new NotFound({ message: `no template ${templateId}` })
      })

    return { create, list, get, remove } as const
  }),
  dependencies: [TemplatesRepo.Default, MediaProbe.Default, ListCursors.Default, BotsRepo.Default]
}) {}
