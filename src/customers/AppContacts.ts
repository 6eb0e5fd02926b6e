import { Effect } from "effect"
import { describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import { toE164 } from "../messaging/phone.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { Segments } from "../segments/Segments.ts"
import { pageOf, readCursor } from "../storage/pageCursor.ts"
import { presentAppCustomer } from "./appCustomer.ts"
import { CUSTOMERS_LIMIT_DEFAULT } from "./Customers.ts"
import { CustomersRepo } from "./CustomersRepo.ts"
import { MAX_TAG_LENGTH } from "./traitFilters.ts"
import { applyTraitChanges, MAX_NAME, MAX_USER_ID, parseTraitChanges, type TraitChanges } from "./traits.ts"

export interface ContactInput {
  readonly phone: string
  readonly name?: string | undefined
  readonly user_id?: string | undefined
  readonly traits?: unknown
  readonly tags?: unknown
}

export interface ContactPatch {
  readonly name?: string | null | undefined
  readonly user_id?: string | null | undefined
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

/** Text set on a contact: trimmed, 1 to `max` characters; null passes through (PATCH clears with it). */
const textOf = (value: string | null | undefined, path: string, max: number, issues: Array<FieldIssue>) => {
  if (value === undefined || value === null) return value
  const trimmed = value.trim()
  if (trimmed.length === 0 || value.length > max) issues.push(new FieldIssue({ path, message: `must be 1 to ${max} characters` }))
  return trimmed
}

const refused = (issues: ReadonlyArray<FieldIssue>) => new InvalidRequest({ message: describeIssues(issues), errors: [...issues] })

/** Traits merged, tags as `tags` decides: added (POST, like track/users) or replacing the set (PATCH). */
const merging = (changes: TraitChanges, replaceTags: boolean) => (current: { readonly traits: Record<string, unknown>; readonly tags: ReadonlyArray<string> }) => {
  const next = applyTraitChanges(replaceTags ? { ...current, tags: [] } : current, changes)
  return "issues" in next ? Effect.fail(refused(next.issues)) : Effect.succeed(next)
}

/**
 * /api/v1/app/contacts (docs/app-api.md): the account's customers under the app API's names, on
 * the same rows, rules and search as the public API's customers (src/customers/Customers.ts).
 */
export class AppContacts extends Effect.Service<AppContacts>()("herald/customers/AppContacts", {
  effect: Effect.gen(function*() {
    const repo = yield* CustomersRepo
    const segments = yield* Segments

    const found = (accountId: string, customerId: string) =>
      Effect.flatMap(repo.find(accountId, customerId), (row) => (row === undefined ? Effect.fail(new NotFound({ message: `no contact ${customerId}` })) : Effect.succeed(row)))

    /** POST: idempotent by phone; an existing contact's traits are merged and tags added. */
    const create = (account: SecretKeyAccount, input: ContactInput) =>
      Effect.gen(function*() {
        const issues: Array<FieldIssue> = []
        const phone = toE164(input.phone)
        if ("problem" in phone) issues.push(new FieldIssue({ path: "phone", message: phone.problem }))
        const name = textOf(input.name, "name", MAX_NAME, issues) ?? undefined
        const userId = textOf(input.user_id, "user_id", MAX_USER_ID, issues) ?? undefined
        const changes = parseTraitChanges(input.traits, input.tags, issues)
        if (issues.length > 0 || "problem" in phone) return yield* refused(issues)
        const existing = yield* repo.findByPhone(account.accountId, phone.e164)
        const id = yield* repo.upsert({ accountId: account.accountId, phone: phone.e164, name, userId }, merging(changes, false))
        return { success: true as const, created: existing === undefined, contact: presentAppCustomer((yield* repo.find(account.accountId, id))!) }
      })

    /** PATCH: name and user_id set (null clears), traits merged (null removes one), tags replaced. */
    const update = (account: SecretKeyAccount, customerId: string, patch: ContactPatch) =>
      Effect.gen(function*() {
        yield* found(account.accountId, customerId)
        const issues: Array<FieldIssue> = []
        const name = textOf(patch.name, "name", MAX_NAME, issues)
        const userId = textOf(patch.user_id, "user_id", MAX_USER_ID, issues)
        const changes = parseTraitChanges(patch.traits, patch.tags, issues)
        if (issues.length > 0) return yield* refused(issues)
        const replaceTags = patch.tags !== undefined && patch.tags !== null
        const updated = yield* repo.update({ accountId: account.accountId, customerId, name, userId }, (current) =>
          replaceTags ? merging(changes, true)(current) : merging({ ...changes, addTags: [] }, false)(current))
        if (updated === undefined) return yield* new NotFound({ message: `no contact ${customerId}` })
        return { success: true as const, contact: presentAppCustomer(yield* found(account.accountId, customerId)) }
      })

    const get = (account: SecretKeyAccount, customerId: string) =>
      Effect.map(found(account.accountId, customerId), (row) => ({ success: true as const, contact: presentAppCustomer(row) }))

    const remove = (account: SecretKeyAccount, customerId: string) =>
      Effect.gen(function*() {
        if (!(yield* repo.remove(account.accountId, customerId))) return yield* new NotFound({ message: `no contact ${customerId}` })
        return { success: true as const }
      })

    /** Newest first; `search` (name or phone), `tag` and `segment_id` narrow it together. */
    const list = (account: SecretKeyAccount, query: ContactsQuery) =>
      Effect.gen(function*() {
        const issues: Array<FieldIssue> = []
        if (query.tag !== undefined && (query.tag.length === 0 || query.tag.length > MAX_TAG_LENGTH)) {
          issues.push(new FieldIssue({ path: "tag", message: `must be a tag (1 to ${MAX_TAG_LENGTH} characters)` }))
        }
        if (query.search !== undefined && query.search.length > 200) issues.push(new FieldIssue({ path: "search", message: "must be at most 200 characters" }))
        if (issues.length > 0) return yield* refused(issues)
        const after = yield* readCursor(query.cursor)
        const segment = query.segment_id === undefined ? { filters: [], tags: [] } : yield* segments.queryFor(account, query.segment_id)
        const limit = query.limit ?? CUSTOMERS_LIMIT_DEFAULT
        const rows = yield* repo.search({
          accountId: account.accountId,
          query: { filters: segment.filters, tags: query.tag === undefined ? segment.tags : [...segment.tags, query.tag], search: query.search },
          after,
          limit
        })
        const page = pageOf(rows, limit, (row) => ({ createdAt: row.position, id: row.customerId }))
        return { success: true as const, contacts: page.rows.map(presentAppCustomer), next_cursor: page.nextCursor ?? "" }
      })

    return { create, update, get, remove, list } as const
  }),
  dependencies: [CustomersRepo.Default, Segments.Default]
}) {}
