import { Effect } from "effect"
import { describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import { unstorableText } from "../domain/storable.ts"
import { type CustomerPage, CUSTOMERS_LIMIT_DEFAULT, customersScope } from "../customers/Customers.ts"
import { CustomersRepo } from "../customers/CustomersRepo.ts"
import { type CustomerQuery, parseCustomerQuery } from "../customers/traitFilters.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { ListCursors } from "../storage/ListCursors.ts"
import { type SegmentRow, SegmentsRepo } from "./SegmentsRepo.ts"

export const SEGMENTS_LIMIT_DEFAULT = 20
export const SEGMENTS_LIMIT_MAX = 100
export const SEGMENT_NAME_MAX = 100

/** A segment with the count of the customers it matches now (worked out when read, never stored). */
export interface Segment {
  readonly segmentId: string
  readonly name: string
  readonly filters: ReadonlyArray<unknown>
  readonly tags: ReadonlyArray<string>
  readonly customerCount: number
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface SegmentPage {
  readonly items: ReadonlyArray<Segment>
  readonly nextCursor: string | undefined
}

export interface SegmentInput {
  readonly name?: string | undefined
  readonly filters?: unknown
  readonly tags?: unknown
}

interface PageQuery {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** A segment's stored filters and tags as a query: stored only after the same parser accepted them. */
const queryOf = (row: SegmentRow): CustomerQuery => {
  const query = parseCustomerQuery({ filters: row.filters, tags: row.tags })
  // Unreachable for rows this service wrote; a hand-edited row matches no one rather than everyone.
  return "issues" in query ? { filters: [{ trait: "\u0000", op: "exists" }], tags: [] } : query
}

const nameOf = (name: string | undefined, issues: Array<FieldIssue>) => {
  if (name === undefined) return undefined
  const trimmed = name.trim()
  if (trimmed.length === 0 || trimmed.length > SEGMENT_NAME_MAX) issues.push(new FieldIssue({ path: "name", message: `must be 1 to ${SEGMENT_NAME_MAX} characters` }))
  else {
    const problem = unstorableText(trimmed)
    if (problem !== undefined) issues.push(new FieldIssue({ path: "name", message: problem }))
  }
  return trimmed
}

/**
 * Segments (docs/app-api.md): saved customer searches, `{name, filters, tags}` in the public
 * search's shape, checked by the same parser and evaluated in Postgres by the same condition
 * (src/customers/filterSql.ts) as POST /public/customers/search. Their count is worked out when
 * read, never stored, so it is always the customers matching now.
 */
export class Segments extends Effect.Service<Segments>()("herald/segments/Segments", {
  effect: Effect.gen(function*() {
    const repo = yield* SegmentsRepo
    const customers = yield* CustomersRepo
    const cursors = yield* ListCursors

    const counted = (accountId: string, row: SegmentRow) =>
      Effect.map(customers.count(accountId, queryOf(row)), (count): Segment => ({
        segmentId: row.segmentId,
        name: row.name,
        filters: row.filters,
        tags: row.tags,
        customerCount: count,
        createdAt: row.createdAt,
        updatedAt: row.updatedAt
      }))

    const find = (accountId: string, segmentId: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(accountId, segmentId)
        if (row === undefined) return yield* new NotFound({ message: `no segment ${segmentId}` })
        return row
      })

    /** The customer query a segment stands for (GET /app/contacts?segment_id=). */
    const queryFor = (account: SecretKeyAccount, segmentId: string) => Effect.map(find(account.accountId, segmentId), queryOf)

    /** Name, filters and tags checked together: every problem at once, nothing written. */
    const check = (input: SegmentInput) => {
      const issues: Array<FieldIssue> = []
      const name = nameOf(input.name, issues)
      const query = parseCustomerQuery({ filters: input.filters, tags: input.tags })
      if ("issues" in query) issues.push(...query.issues)
      return issues.length > 0 || "issues" in query
        ? Effect.fail(new InvalidRequest({ message: describeIssues(issues), errors: issues }))
        : Effect.succeed({ name, query })
    }

    const create = (account: SecretKeyAccount, input: SegmentInput & { readonly name: string }) =>
      Effect.gen(function*() {
        const { name } = yield* check(input)
        const row = yield* repo.insert(account.accountId, { name: name!, filters: input.filters ?? [], tags: (input.tags as ReadonlyArray<string> | undefined) ?? [] })
        return yield* counted(account.accountId, row)
      })

    const update = (account: SecretKeyAccount, segmentId: string, input: SegmentInput) =>
      Effect.gen(function*() {
        yield* find(account.accountId, segmentId)
        const { name } = yield* check(input)
        const row = yield* repo.update(account.accountId, segmentId, { name, filters: input.filters, tags: input.tags as ReadonlyArray<string> | undefined })
        if (row === undefined) return yield* new NotFound({ message: `no segment ${segmentId}` })
        return yield* counted(account.accountId, row)
      })

    const get = (account: SecretKeyAccount, segmentId: string) =>
      Effect.gen(function*() {
        const row = yield* find(account.accountId, segmentId)
        return yield* counted(account.accountId, row)
      })

    const remove = (account: SecretKeyAccount, segmentId: string) =>
      Effect.gen(function*() {
        if (!(yield* repo.remove(account.accountId, segmentId))) return yield* new NotFound({ message: `no segment ${segmentId}` })
      })

    /** Newest first; each with its count, two counted at a time (each is a query over the account's customers). */
    const list = (account: SecretKeyAccount, query: PageQuery) =>
      Effect.gen(function*() {
        const scope = { list: "segments", accountId: account.accountId }
        const after = yield* cursors.readPosition(scope, query.cursor)
        const limit = query.limit ?? SEGMENTS_LIMIT_DEFAULT
        const paged = cursors.positionPage(scope, yield* repo.page(account.accountId, after, limit), limit, (row) => ({ createdAt: row.position, id: row.segmentId }))
        const items = yield* Effect.forEach(paged.rows, (row) => counted(account.accountId, row), { concurrency: 2 })
        return { items, nextCursor: paged.nextCursor } satisfies SegmentPage
      })

    /** GET /app/segments/{id}/contacts: the customers the segment matches now, newest first. */
    const members = (account: SecretKeyAccount, segmentId: string, query: PageQuery) =>
      Effect.gen(function*() {
        const row = yield* find(account.accountId, segmentId)
        const scope = customersScope(account.accountId)
        const after = yield* cursors.readPosition(scope, query.cursor)
        const limit = query.limit ?? CUSTOMERS_LIMIT_DEFAULT
        const rows = yield* customers.search({ accountId: account.accountId, query: queryOf(row), after, limit })
        const paged = cursors.positionPage(scope, rows, limit, (customer) => ({ createdAt: customer.position, id: customer.customerId }))
        return { items: paged.rows, nextCursor: paged.nextCursor } satisfies CustomerPage
      })

    return { create, update, get, remove, list, members, queryFor } as const
  }),
  dependencies: [SegmentsRepo.Default, CustomersRepo.Default, ListCursors.Default]
}) {}
