import type { ContactRow, ListRow } from "../../contacts/ContactListsRepo.ts"
import type { CursorPage } from "../../storage/ListCursors.ts"
import { presentListPage } from "./listPage.ts"

// How /api/v1/rcs/contact-lists presents the ContactLists service's domain values (ContactListsApi.ts
// declares the shapes).

const presentList = (row: ListRow) => ({
  list_id: row.listId,
  name: row.name,
  contact_count: row.contactCount,
  created_at: new Date(row.createdAt).toISOString()
})

const presentContact = (row: ContactRow) => ({
  contact_id: row.contactId,
  phone: row.phone,
  name: row.name,
  params: row.params,
  created_at: new Date(row.createdAt).toISOString()
})

export const presentContactList = (row: ListRow) => ({ success: true as const, list: presentList(row) })
export const presentContactLists = (page: CursorPage<ListRow>) => presentListPage("lists", page, presentList)
export const presentContacts = (page: CursorPage<ContactRow>) => presentListPage("contacts", page, presentContact)
