import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Conflict, describeIssues, FieldIssue, InvalidRequest } from "../domain/errors.ts"
import type { PagePosition } from "../storage/pageCursor.ts"
import { CursorPages } from "./cursorPage.ts"
import { PartnersRepo } from "./PartnersRepo.ts"
import { ProductionAccessRepo } from "./ProductionAccessRepo.ts"

export const MAIL_TYPES = ["MARKETING", "TRANSACTIONAL"] as const
export type MailType = (typeof MAIL_TYPES)[number]
export const DESCRIPTION_MAX = 5000
export const WEBSITE_URL_MAX = 2048

export interface AccessRequestInput {
  readonly mail_type: MailType
  readonly website_url: string
  readonly use_case_description: string
}

interface PageQuery {
  readonly limit?: number | undefined
  readonly next_cursor?: string | undefined
}

/** Why a website URL is refused: an absolute http(s) URL with a host. It is only shown to the operator, never fetched. */
const websiteProblem = (raw: string): string | undefined => {
  if (raw.length > WEBSITE_URL_MAX) return `must be at most ${WEBSITE_URL_MAX} characters`
  try {
    const url = new URL(raw)
    if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http or https URL"
    if (url.hostname === "") return "must name a host"
    return undefined
  } catch {
    return "must be an absolute http or https URL"
  }
}

/**
 * Requests to leave the sandbox (SES v2's PutAccountDetails): a partner asks, Herald's operator
 * grants or denies (`herald admin email-production-access`, Partners.decideProductionAccess).
 * One request may be pending at a time, and none once access is granted.
 */
export class ProductionAccess extends Effect.Service<ProductionAccess>()("herald/email/ProductionAccess", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pages = yield* CursorPages
    const repo = yield* ProductionAccessRepo
    const partners = yield* PartnersRepo

    const request = Effect.fn("ProductionAccess.request")(function*(partnerId: string, input: AccessRequestInput) {
      const issues: Array<FieldIssue> = []
      if (!MAIL_TYPES.includes(input.mail_type)) issues.push(new FieldIssue({ path: "mail_type", message: `must be one of ${MAIL_TYPES.join(", ")}` }))
      const problem = websiteProblem(input.website_url)
      if (problem !== undefined) issues.push(new FieldIssue({ path: "website_url", message: problem }))
      if (input.use_case_description.trim() === "") issues.push(new FieldIssue({ path: "use_case_description", message: "must not be empty" }))
      if (input.use_case_description.length > DESCRIPTION_MAX) {
        issues.push(new FieldIssue({ path: "use_case_description", message: `must be at most ${DESCRIPTION_MAX} characters` }))
      }
      if (issues.length > 0) return yield* new InvalidRequest({ message: describeIssues(issues), errors: issues })

      // The partner's row is locked meanwhile: two requests at once cannot both find none pending,
      // and a grant cannot slip in between the check and the insert.
      const row = yield* sql.withTransaction(Effect.gen(function*() {
        const partner = yield* partners.lockForAccessRequest(partnerId)
        if (partner === undefined) return yield* Effect.dieMessage(`no partner ${partnerId}`)
        if (partner.productionAccess) {
          return yield* new Conflict({ key: "production_access", message: "this partner already has production access" })
        }
        if (partner.pending) {
          return yield* new Conflict({ key: "production_access", message: "a request for production access is pending; wait for its decision" })
        }
        return yield* repo.insert(partnerId, { mailType: input.mail_type, websiteUrl: input.website_url, useCaseDescription: input.use_case_description })
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      return row
    })

    /** The partner's requests, newest first. */
    const list = Effect.fn("ProductionAccess.list")(function*(partnerId: string, query: PageQuery) {
      return yield* pages.page(
        { list: "production_access", partnerId },
        query,
        (after: PagePosition | undefined, take: number) => repo.page(partnerId, after, take),
        (row) => ({ createdAt: row.position, id: row.requestId })
      )
    })

    return { request, list } as const
  }),
  dependencies: [ProductionAccessRepo.Default, PartnersRepo.Default, CursorPages.Default]
}) {}
