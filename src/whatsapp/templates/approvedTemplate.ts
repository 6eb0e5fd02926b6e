import { Effect } from "effect"
import { TemplateNotUsable } from "../errors.ts"
import type { WaTemplatesRepo } from "./WaTemplatesRepo.ts"

/**
 * The APPROVED template of that name and language, or 400 template_not_usable saying why not (no
 * such name, no such language, pending, rejected): what a Template send and a campaign both ask.
 */
export const approvedTemplate = (templates: WaTemplatesRepo, accountId: string, name: string, languageCode: string) =>
  Effect.gen(function*() {
    const found = yield* templates.byName(accountId, name)
    const exact = found.find((t) => t.language === languageCode)
    if (exact === undefined) {
      return yield* new TemplateNotUsable({
        message: found.length === 0
          ? `no template named ${name}`
          : `template ${name} has no ${languageCode} version (it has ${found.map((t) => t.language).join(", ")})`
      })
    }
    if (exact.status !== "APPROVED") {
      return yield* new TemplateNotUsable({
        message: exact.status === "PENDING"
          ? `template ${name} (${languageCode}) is still pending Meta's review`
          : `template ${name} (${languageCode}) was rejected${exact.rejectedReason ? ` (${exact.rejectedReason})` : ""}`
      })
    }
    return exact
  })
