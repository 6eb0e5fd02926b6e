/**
 * The opaque cursor of a list's contacts page: the contact_id of the page's last row (the page is
 * newest first, by contact_id). Contacts have a bigint id rather than a uuid, so the accounts'
 * lists' cursor (storage/pageCursor.ts) does not fit them; base64url keeps clients from relying on
 * its form all the same.
 */
export const encodeContactCursor = (contactId: string): string => Buffer.from(JSON.stringify([contactId])).toString("base64url")

/** The contact_id a cursor names, or undefined when it is not one this page gave out. */
export const decodeContactCursor = (cursor: string): string | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (!Array.isArray(parsed) || parsed.length !== 1) return undefined
    const [id] = parsed as [unknown]
    return typeof id === "string" && /^[1-9]\d{0,18}$/.test(id) ? id : undefined
  } catch {
    return undefined
  }
}
