import { Effect } from "effect"
import { describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { customerPhone, eitherSpelling, PUBLIC_PHONE, PUBLIC_USER_ID, type Spellings } from "./customerShape.ts"
import { type CustomerRow, CustomersRepo } from "./CustomersRepo.ts"
import { parseCustomerQuery } from "./traitFilters.ts"
import { customerText, MAX_NAME, MAX_USER_ID, mergeWith, parseTraitChanges } from "./traits.ts"
import { type CursorScope, ListCursors } from "../storage/ListCursors.ts"

export const CUSTOMERS_LIMIT_DEFAULT = 50
export const CUSTOMERS_LIMIT_MAX = 1_000

/** The cursors of every list of the account's customers (search, app contacts, a segment's members, GraphQL's contacts). */
export const customersScope = (accountId: string): CursorScope => ({ list: "customers", accountId })

/**
 * track/users' body, and /app/contacts's POST: the phone and the caller's id under either of their
 * spellings (Interakt's fullPhoneNumber and userId, or the answers' phone and user_id).
 */
export interface TrackInput {
  readonly fullPhoneNumber?: string | undefined
  readonly phone?: string | undefined
  readonly userId?: string | undefined
  readonly user_id?: string | undefined
  readonly name?: string | undefined
  readonly traits?: unknown
  readonly tags?: unknown
}

/** Which spelling of each field a surface documents (the one an error names when neither was given). */
export interface CustomerSpellings {
  readonly phone: Spellings
  readonly userId: Spellings
}

export const PUBLIC_SPELLINGS: CustomerSpellings = { phone: PUBLIC_PHONE, userId: PUBLIC_USER_ID }

/** A customer saved by track/users or POST /app/contacts: its id, and whether this call created it. */
export interface SavedCustomer {
  readonly customerId: string
  readonly created: boolean
}

/** One page of customers, newest first, and the cursor of the next (undefined on the last page). */
export interface CustomerPage {
  readonly items: ReadonlyArray<CustomerRow>
  readonly nextCursor: string | undefined
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
    const save = (account: Pick<SecretKeyAccount, "accountId">, input: TrackInput, spellings: CustomerSpellings = PUBLIC_SPELLINGS): Effect.Effect<SavedCustomer, InvalidRequest> =>
      Effect.gen(function*() {
        const issues: Array<FieldIssue> = []
        const phone = customerPhone(input, spellings.phone, issues)
        const given = eitherSpelling<string>(input, spellings.userId, issues)
        const name = customerText(input.name, "name", MAX_NAME, issues)
        const userId = customerText(given.value, given.path, MAX_USER_ID, issues)
        const changes = parseTraitChanges(input.traits, input.tags, issues)
        if (issues.length > 0 || phone === undefined) return yield* new InvalidRequest({ message: describeIssues(issues), errors: issues })
        return yield* repo.upsert({ accountId: account.accountId, phone, name, userId }, mergeWith(changes))
      })

    /** track/users: `save` under the public API's spellings. */
    const track = (account: SecretKeyAccount, input: TrackInput) => save(account, input)

    const search = (account: SecretKeyAccount, input: SearchInput) =>
      Effect.gen(function*() {
        const query = parseCustomerQuery(input)
        if ("issues" in query) return yield* new InvalidRequest({ message: describeIssues(query.issues), errors: [...query.issues] })
        const scope = customersScope(account.accountId)
        const after = yield* cursors.readPosition(scope, input.cursor)
        const limit = input.limit ?? CUSTOMERS_LIMIT_DEFAULT
        const rows = yield* repo.search({ accountId: account.accountId, query, after, limit })
        const page = cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.customerId }))
        return { items: page.rows, nextCursor: page.nextCursor } satisfies CustomerPage
      })

    const get = (account: SecretKeyAccount, customerId: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(account.accountId, customerId)
        if (row === undefined) return yield* new NotFound({ message: `no customer ${customerId}` })
        return row
      })

    return { save, track, search, get } as const
  }),
  dependencies: [CustomersRepo.Default, ListCursors.Default]
}) {}
