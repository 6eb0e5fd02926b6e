import type { CustomerRow } from "./CustomersRepo.ts"

/** A customer as /api/v1/app shows it (a "contact"): the phone in E.164 with its '+'. */
export const presentAppCustomer = (row: CustomerRow) => ({
  id: row.customerId,
  phone: row.phone,
  name: row.name,
  user_id: row.userId,
  traits: row.traits,
  tags: row.tags,
  created_at: row.createdAt.toISOString(),
  last_seen_at: row.lastSeenAt?.toISOString() ?? null
})
