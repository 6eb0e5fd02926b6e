import { Effect } from "effect"
import { requireRole, seesAllBots } from "../domain/access.ts"
import { Conflict, describeIssues, FieldIssue, Forbidden, InvalidRequest } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import { BotsRepo, type UseCase } from "./BotsRepo.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { normaliseBrandWebsite } from "./brandWebsite.ts"
import { parseGstin } from "./gstin.ts"

export interface BotApplication {
  readonly botName: string
  readonly companyName: string
  readonly companyGstin: string
  readonly brandWebsite: string
  readonly useCase: UseCase
}

/**
 * POST /api/v1/rcs/apply (contract; DESIGN.md, Bots): an account applies for a bot, which waits in
 * `pending` until a platform operator decides (`herald admin bot-status`). A GSTIN or a brand
 * website belongs to the first account that applied with it: another account gets 409 with `key`
 * naming the field; the same account may reuse them for more bots.
 */
export class BotApplications extends Effect.Service<BotApplications>()("herald/bots/BotApplications", {
  effect: Effect.gen(function*() {
    const repo = yield* BotsRepo
    const feed = yield* ChangeFeed

    const apply = (principal: Principal, input: BotApplication) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "apply for a bot")
        // A member limited to some bots could not see the bot it applied for.
        if (!seesAllBots(principal)) return yield* new Forbidden({ message: "only a member who sees every bot can apply for a new one" })
        const gstin = parseGstin(input.companyGstin)
        const website = normaliseBrandWebsite(input.brandWebsite)
        const issues = [
          ...("problem" in gstin ? [new FieldIssue({ path: "company_gstin", message: gstin.problem })] : []),
          ...("problem" in website ? [new FieldIssue({ path: "brand_website", message: website.problem })] : [])
        ]
        if ("problem" in gstin || "problem" in website) {
          return yield* new InvalidRequest({ message: describeIssues(issues), errors: issues })
        }
        const result = yield* repo.apply({
          accountId: principal.accountId,
          name: input.botName,
          useCase: input.useCase,
          companyName: input.companyName,
          companyGstin: gstin.gstin,
          brandWebsite: website.url,
          brandSite: website.site
        })
        if (result._tag === "Taken") {
          const key = result.fields[0] ?? "company_gstin"
          return yield* new Conflict({ key, message: `${key} is already registered by another account` })
        }
        // The applicant reads its new bot next: this node's cache must not wait for the notification.
        yield* feed.committed("bots", principal.accountId)
        return result.bot
      })

    return { apply } as const
  }),
  dependencies: [BotsRepo.Default, ChangeFeed.Default]
}) {}
