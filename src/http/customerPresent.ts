import { Effect } from "effect"
import type { CustomerPage, SavedCustomer, SearchInput, TrackInput } from "../customers/Customers.ts"
import { Customers } from "../customers/Customers.ts"
import type { CustomerRow } from "../customers/CustomersRepo.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"

/**
 * A customer as every surface answers it (docs/customers.md, "One customer shape"): the public API
 * (track/users' search, one customer), /api/v1/app/contacts and GraphQL's `Contact` show the same
 * fields under the same names. `phone` is E.164 with its '+' (the contract fixes GraphQL's
 * `Contact.phone`), `user_id` the caller's own id; times are ISO 8601 UTC to the millisecond.
 */
export const presentCustomer = (row: CustomerRow) => ({
  id: row.customerId,
  phone: row.phone,
  name: row.name,
  user_id: row.userId,
  traits: row.traits,
  tags: row.tags,
  created_at: row.createdAt.toISOString(),
  last_seen_at: row.lastSeenAt?.toISOString() ?? null
})

/**
 * A customer as the public API answers it: the shape every surface shares, and beside it Interakt's
 * names for the same two fields (`fullPhoneNumber` as digits without '+', `userId`), which
 * ../shared/design/whatsapp.md gives this surface: a client written for Interakt reads what it
 * knows, and one written for Herald reads the same fields as on /api/v1/app and GraphQL.
 */
export const presentPublicCustomer = (row: CustomerRow) => ({
  ...presentCustomer(row),
  fullPhoneNumber: row.phone.replace(/^\+/, ""),
  userId: row.userId
})

/** track/users' answer. */
export const presentTracked = (saved: SavedCustomer) => ({ result: true as const, success: true as const, id: saved.customerId })

/** POST /public/customers/search's answer: a page of customers with their count. */
export const presentCustomerSearch = (page: CustomerPage) => ({
  result: true as const,
  success: true as const,
  customers: page.items.map(presentPublicCustomer),
  count: page.items.length,
  next_cursor: page.nextCursor ?? ""
})

/** GET /public/customers/{id}'s answer. */
export const presentPublicCustomerAnswer = (row: CustomerRow) => ({ result: true as const, success: true as const, customer: presentPublicCustomer(row) })

/**
 * The public API's customers (track/users, search, one customer) under the service's method names,
 * each answer presented: what the public handler (src/http/public/PublicHttp.ts) yields.
 */
export const PublicCustomers = Effect.map(Customers, (customers) => ({
  track: (account: SecretKeyAccount, input: TrackInput) => Effect.map(customers.track(account, input), presentTracked),
  search: (account: SecretKeyAccount, input: SearchInput) => Effect.map(customers.search(account, input), presentCustomerSearch),
  get: (account: SecretKeyAccount, customerId: string) => Effect.map(customers.get(account, customerId), presentPublicCustomerAnswer)
}))
