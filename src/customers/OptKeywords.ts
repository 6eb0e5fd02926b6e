import { Effect } from "effect"
import { describeIssues, FieldIssue, InvalidRequest } from "../domain/errors.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { makeReadCache } from "../storage/ReadCache.ts"
import { OptKeywordsRepo } from "./OptKeywordsRepo.ts"
import { checkOptKeywords, DEFAULT_OPT_KEYWORDS, type OptKeywords as Keywords } from "./optOut.ts"

/** An account's keywords as shown: its own, or the defaults (`custom` false, `updatedAt` null). */
export interface OptKeywordsView extends Keywords {
  readonly custom: boolean
  readonly updatedAt: Date | null
}

const defaults: OptKeywordsView = { ...DEFAULT_OPT_KEYWORDS, custom: false, updatedAt: null }

/**
 * The keywords by which an account's customers opt out of marketing and back in (docs/opt-outs.md,
 * GET/PUT/DELETE /api/v1/app/opt-out-keywords). Read on every inbound text through a node-local
 * cache that the change feed clears on every node when the account's lists change; an account
 * without a list of its own is cached with the defaults, so its texts cost no query either.
 */
export class OptKeywords extends Effect.Service<OptKeywords>()("herald/customers/OptKeywords", {
  scoped: Effect.gen(function*() {
    const repo = yield* OptKeywordsRepo
    const cache = yield* makeReadCache<OptKeywordsView>({ tables: ["opt_keywords"], capacity: 50_000 })

    const load = (accountId: string) =>
      Effect.map(repo.find(accountId), (row): OptKeywordsView => row === undefined ? defaults : { optOut: row.optOut, optIn: row.optIn, custom: true, updatedAt: row.updatedAt })

    /** The account's keywords (its own or the defaults). */
    const of = (accountId: string) =>
      Effect.map(cache.get(accountId, () => Effect.map(load(accountId), (value) => ({ accountId, value }))), (found) => found ?? defaults)

    /** Replaces the account's lists; 400 naming each entry that is not a keyword. */
    const put = (accountId: string, input: { readonly opt_out: ReadonlyArray<string>; readonly opt_in: ReadonlyArray<string> }) =>
      Effect.gen(function*() {
        const { keywords, problems } = checkOptKeywords(input)
        if (problems.length > 0) {
          return yield* new InvalidRequest({ message: describeIssues(problems), errors: problems.map((p) => new FieldIssue(p)) })
        }
        const updatedAt = yield* repo.save(accountId, keywords)
        return { ...keywords, custom: true, updatedAt } satisfies OptKeywordsView
      })

    /** Back to the defaults. */
    const reset = (accountId: string) => Effect.as(repo.remove(accountId), defaults)

    // `read`: fresh, for the API (a write just made on another node shows at once).
    return { of, put, reset, read: load } as const
  }),
  dependencies: [OptKeywordsRepo.Default, ChangeFeed.Default]
}) {}
