import { Effect } from "effect"
import { describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { APP_PHONE, APP_USER_ID, eitherSpelling } from "./customerShape.ts"
import { type CustomerPage, type CustomerSpellings, Customers, CUSTOMERS_LIMIT_DEFAULT, customersScope } from "./Customers.ts"
import { CustomersRepo } from "./CustomersRepo.ts"
import { type CustomerQuery, MAX_TAG_LENGTH } from "./traitFilters.ts"
import { customerText, MAX_NAME, MAX_USER_ID, mergeWith, parseTraitChanges } from "./traits.ts"
import { ListCursors } from "../storage/ListCursors.ts"

/** POST /app/contacts's body: phone and user_id, or their public spellings fullPhoneNumber and userId. */
export interface ContactInput {
  readonly phone?: string | undefined
  readonly fullPhoneNumber?: string | undefined
  readonly name?: string | undefined
  readonly user_id?: string | undefined
  readonly userId?: string | undefined
  readonly traits?: unknown
  readonly tags?: unknown
}

export interface ContactPatch {
  readonly name?: string | null | undefined
  readonly user_id?: string | null | undefined
  readonly userId?: string | null | undefined
  readonly traits?: unknown
  readonly tags?: unknown
}

export interface ContactsQuery {
  readonly search?: string | undefined
  readonly tag?: string | undefined
  readonly segment_id?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const refused = (issues: ReadonlyArray<FieldIssue>) => new InvalidRequest({ message: describeIssues(issues), errors: [...issues] })

/** The app API documents the answers' spellings, and takes the public API's too. */
const APP_SPELLINGS: CustomerSpellings = { phone: APP_PHONE, userId: APP_USER_ID }

/**
 * /api/v1/app/contacts (docs/app-api.md): the account's customers under the app API's names, on
 * the same rows, rules and search as the public API's customers (src/customers/Customers.ts).
 */
export class AppContacts extends Effect.Service<AppContacts>()("herald/customers/AppContacts", {
  effect: Effect.gen(function*() {
    const repo = yield* CustomersRepo
    const customers = yield* Customers
    const cursors = yield* ListCursors

    const found = (accountId: string, customerId: string) =>
      Effect.flatMap(repo.find(accountId, customerId), (row) => (row === undefined ? Effect.fail(new NotFound({ message: `no contact ${customerId}` })) : Effect.succeed(row)))

    /** POST: idempotent by phone, as track/users (an existing contact's traits are merged and tags added). */
    const create = (account: SecretKeyAccount, input: ContactInput) =>
      Effect.gen(function*() {
        const saved = yield* customers.save(account, input, APP_SPELLINGS)
        return { created: saved.created, contact: (yield* repo.find(account.accountId, saved.customerId))! }
      })

    /** PATCH: name and user_id set (null clears), traits merged (null removes one), tags replaced. */
    const update = (account: SecretKeyAccount, customerId: string, patch: ContactPatch) =>
      Effect.gen(function*() {
        yield* found(account.accountId, customerId)
        const issues: Array<FieldIssue> = []
        const name = customerText(patch.name, "name", MAX_NAME, issues)
        const given = eitherSpelling<string | null>(patch, APP_USER_ID, issues)
        const userId = customerText(given.value, given.path, MAX_USER_ID, issues)
        const changes = parseTraitChanges(patch.traits, patch.tags, issues)
        if (issues.length > 0) return yield* refused(issues)
        const replaceTags = patch.tags !== undefined && patch.tags !== null
        const updated = yield* repo.update({ accountId: account.accountId, customerId, name, userId }, mergeWith(changes, replaceTags))
        if (updated === undefined) return yield* new NotFound({ message: `no contact ${customerId}` })
        return yield* found(account.accountId, customerId)
      })

    const get = (account: SecretKeyAccount, customerId: string) => found(account.accountId, customerId)

    const remove = (account: SecretKeyAccount, customerId: string) =>
      Effect.gen(function*() {
        if (!(yield* repo.remove(account.accountId, customerId))) return yield* new NotFound({ message: `no contact ${customerId}` })
      })

    /**
     * Newest first; `search` (name or phone), `tag` and `segment_id` narrow it together. The
     * segment's query comes from `segmentQuery` (the segments feature, which the caller joins in:
     * segments build on customers, not the other way), asked after the other checks.
     */
    const list = (
      account: SecretKeyAccount,
      query: ContactsQuery,
      segmentQuery: (segmentId: string) => Effect.Effect<Pick<CustomerQuery, "filters" | "tags">, NotFound>
    ) =>
      Effect.gen(function*() {
        const issues: Array<FieldIssue> = []
        if (query.tag !== undefined && (query.tag.length === 0 || query.tag.length > MAX_TAG_LENGTH)) {
          issues.push(new FieldIssue({ path: "tag", message: `must be a tag (1 to ${MAX_TAG_LENGTH} characters)` }))
        }
        if (query.search !== undefined && query.search.length > 200) issues.push(new FieldIssue({ path: "search", message: "must be at most 200 characters" }))
        if (issues.length > 0) return yield* refused(issues)
        const scope = customersScope(account.accountId)
        const after = yield* cursors.readPosition(scope, query.cursor)
        const segment = query.segment_id === undefined ? { filters: [], tags: [] } : yield* segmentQuery(query.segment_id)
        const limit = query.limit ?? CUSTOMERS_LIMIT_DEFAULT
        const rows = yield* repo.search({
          accountId: account.accountId,
          query: { filters: segment.filters, tags: query.tag === undefined ? segment.tags : [...segment.tags, query.tag], search: query.search },
          after,
          limit
        })
        const page = cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.customerId }))
        return { items: page.rows, nextCursor: page.nextCursor } satisfies CustomerPage
      })

    return { create, update, get, remove, list } as const
  }),
  dependencies: [CustomersRepo.Default, Customers.Default, ListCursors.Default]
}) {}
