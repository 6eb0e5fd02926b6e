import { Effect } from "effect"
import { Conflict, fieldIssuesOf, NotFound, ServiceUnavailable } from "../../domain/errors.ts"
import { WaGateway } from "../../gateway/WaGateway.ts"
import type { SecretKeyAccount } from "../../security/SecretKeys.ts"
import { isUniqueViolation } from "../../storage/sqlState.ts"
import { NoWaNumber, WaTemplateInvalid } from "../errors.ts"
import { WaNumbers } from "../numbers/WaNumbers.ts"
import { checkTemplate, type TemplateCategory } from "./templateRules.ts"
import { type WaTemplateStatus, WaTemplatesRepo } from "./WaTemplatesRepo.ts"
import { type CursorScope, ListCursors } from "../../storage/ListCursors.ts"

export const WA_TEMPLATES_LIMIT_DEFAULT = 100
export const WA_TEMPLATES_LIMIT_MAX = 1000

/** The cursors of the account's WhatsApp templates (the public API's list and GraphQL's templates alike). */
export const waTemplatesScope = (accountId: string): CursorScope => ({ list: "wa-templates", accountId })

const invalid = (errors: ReadonlyArray<string>, warnings: ReadonlyArray<string>) =>
  new WaTemplateInvalid({
    message: `the template breaks ${errors.length === 1 ? "a WhatsApp limit" : `${errors.length} WhatsApp limits`}: ${errors.join("; ")}`,
    errors,
    warnings,
    issues: fieldIssuesOf(errors)
  })

/**
 * WhatsApp templates (docs/whatsapp.md, Templates): checked against Meta's limits, recorded
 * PENDING, submitted to Meta under the account's WhatsApp Business Account; Meta's review comes
 * back by webhook (APPROVED or REJECTED with its reason).
 */
export class WaTemplates extends Effect.Service<WaTemplates>()("herald/whatsapp/WaTemplates", {
  effect: Effect.gen(function*() {
    const repo = yield* WaTemplatesRepo
    const cursors = yield* ListCursors
    const numbers = yield* WaNumbers
    const gateway = yield* WaGateway

    const create = (account: SecretKeyAccount, body: unknown) =>
      Effect.gen(function*() {
        const checked = checkTemplate(body)
        if (checked.errors.length > 0 || checked.template === undefined || checked.kind === undefined) {
          return yield* invalid(checked.errors.length > 0 ? checked.errors : ["the template could not be read"], checked.warnings)
        }
        const number = yield* numbers.sender(account.accountId, undefined)
        if (number === undefined) return yield* new NoWaNumber({ message: "this account has no WhatsApp number, so no WhatsApp Business Account to submit templates to" })
        const definition = checked.template
        const taken = new Conflict({ message: `a template named ${definition.name} in ${definition.language} exists; delete it first or pick another name`, key: "name" })
        if (yield* repo.exists(account.accountId, definition.name, definition.language)) return yield* taken
        // Submitted first, recorded once Meta took it: a refusal writes nothing.
        const submitted = yield* gateway.submitTemplate(number.wabaId, definition as unknown as Record<string, unknown>)
        if (submitted._tag === "Refused") {
          if (submitted.unavailable) return yield* new ServiceUnavailable({ message: `Meta did not take the template: ${submitted.reason}; try again` })
          return yield* invalid([`Meta refused the template: ${submitted.reason}`], checked.warnings)
        }
        const row = yield* repo.insert({
          accountId: account.accountId,
          wabaId: number.wabaId,
          upstreamId: submitted.upstreamId,
          definition,
          kind: checked.kind,
          warnings: checked.warnings
        }).pipe(Effect.catchIf(isUniqueViolation, () => taken), Effect.orDie)
        return row
      })

    const list = (account: SecretKeyAccount, query: { status?: WaTemplateStatus | undefined; category?: TemplateCategory | undefined; limit?: number | undefined; cursor?: string | undefined }) =>
      Effect.gen(function*() {
        const scope = waTemplatesScope(account.accountId)
        const after = yield* cursors.readPosition(scope, query.cursor)
        const limit = Math.min(query.limit ?? WA_TEMPLATES_LIMIT_DEFAULT, WA_TEMPLATES_LIMIT_MAX)
        const rows = yield* repo.page({ accountId: account.accountId, status: query.status, category: query.category, after, limit })
        const page = cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.templateId }))
        return { items: page.rows, nextCursor: page.nextCursor }
      })

    const visible = (account: SecretKeyAccount, templateId: string) =>
      Effect.flatMap(repo.find(account.accountId, templateId), (row) =>
        row === undefined ? Effect.fail(new NotFound({ message: `no template ${templateId}` })) : Effect.succeed(row))

    const get = (account: SecretKeyAccount, templateId: string) => visible(account, templateId)

    /** Deleted here at once; Meta is told (best effort: a template Meta still has cannot be sent through Herald). */
    const remove = (account: SecretKeyAccount, templateId: string) =>
      Effect.gen(function*() {
        const row = yield* visible(account, templateId)
        yield* repo.remove(row.templateId)
        yield* gateway.deleteTemplate(row.wabaId, row.name, row.upstreamId)
      })

    return { create, list, get, remove } as const
  }),
  dependencies: [WaTemplatesRepo.Default, WaNumbers.Default, ListCursors.Default]
}) {}
