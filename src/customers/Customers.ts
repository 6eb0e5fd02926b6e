import { Effect } from "effect"
import { describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import { toE164 } from "../messaging/phone.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { digitsOf } from "../whatsapp/events.ts"
import { type CustomerRow, CustomersRepo } from "./CustomersRepo.ts"
import { parseCustomerQuery } from "./traitFilters.ts"
import { customerText, MAX_NAME, MAX_USER_ID, mergeWith, parseTraitChanges } from "./traits.ts"
import { type CursorScope, ListCursors } from "../storage/ListCursors.ts"

export const CUSTOMERS_LIMIT_DEFAULT = 50
export const CUSTOMERS_LIMIT_MAX = 1_000

/** The cursors of every list of the account's customers (search, app contacts, a segment's members, GraphQL's contacts). */
export const customersScope = (accountId: string): CursorScope => ({ list: "customers", accountId })

/** A customer as the public API shows it (Interakt's naming: digits without '+'). */
export const presentCustomer = (row: CustomerRow) => ({
  id: row.customerId,
  fullPhoneNumber: digitsOf(row.phone),
  name: row.name,
  userId: row.userId,
  traits: row.traits,
  tags: row.tags,
  created_at: row.createdAt.toISOString(),
  last_seen_at: row.lastSeenAt?.toISOString() ?? null
})

export interface TrackInput {
  readonly fullPhoneNumber: string
  readonly userId?: string | undefined
  readonly name?: string | undefined
  readonly traits?: unknown
  readonly tags?: unknown
}

export interface SearchInput {
  readonly filters?: unknown
  readonly tags?: unknown
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** Customers of the public API (docs/customers.md): track/users, search, one customer. */
export class Customers extends Effect.Service<Customers>()("herald/customers/Customers", {
  effect: Effect.gen(function*() {
    const repo = yield* CustomersRepo
    const cursors = yield* ListCursors

    /**
     * A customer by phone, created or updated (traits merged, a null trait removed, tags added):
     * track/users, and /app/contacts's POST under its own field names. Its id, and whether it is new.
     */
    const save = (account: Pick<SecretKeyAccount, "accountId">, input: TrackInput) =>
      Effect.gen(function*() {
        const issues: Array<FieldIssue> = []
        const phone = toE164(input.fullPhoneNumber)
        if ("problem" in phone) issues.push(new FieldIssue({ path: "fullPhoneNumber", message: phone.problem }))
        const name = customerText(input.name, "name", MAX_NAME, issues)
        const userId = customerText(input.userId, "userId", MAX_USER_ID, issues)
        const changes = parseTraitChanges(input.traits, input.tags, issues)
        if (issues.length > 0 || "problem" in phone) return yield* new InvalidRequest({ message: describeIssues(issues), errors: issues })
        return yield* repo.upsert({ accountId: account.accountId, phone: phone.e164, name, userId }, mergeWith(changes))
      })

    const track = (account: SecretKeyAccount, input: TrackInput) =>
      Effect.map(save(account, input), (saved) => ({ result: true as const, success: true as const, id: saved.customerId }))

    const search = (account: SecretKeyAccount, input: SearchInput) =>
      Effect.gen(function*() {
        const query = parseCustomerQuery(input)
        if ("issues" in query) return yield* new InvalidRequest({ message: describeIssues(query.issues), errors: [...query.issues] })
        const scope = customersScope(account.accountId)
        const after = yield* cursors.readPosition(scope, input.cursor)
        const limit = input.limit ?? CUSTOMERS_LIMIT_DEFAULT
        const rows = yield* repo.search({ accountId: account.accountId, query, after, limit })
        const page = cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.customerId }))
        return {
          result: true as const,
          success: true as const,
          customers: page.rows.map(presentCustomer),
          count: page.rows.length,
          next_cursor: page.nextCursor ?? ""
        }
      })

    const get = (account: SecretKeyAccount, customerId: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(account.accountId, customerId)
        if (row === undefined) return yield* new NotFound({ message: `no customer ${customerId}` })
        return { result: true as const, success: true as const, customer: presentCustomer(row) }
      })

    return { save, track, search, get } as const
  }),
  dependencies: [CustomersRepo.Default, ListCursors.Default]
}) {}
