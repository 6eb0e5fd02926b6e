/**
 * The opaque cursor of a broadcast's targets page: the target_no of the page's last row (pages go
 * newest first, by target_no). base64url keeps clients from relying on its form.
 */
export const encodeTargetCursor = (targetNo: number): string => Buffer.from(JSON.stringify([targetNo])).toString("base64url")

/** The target_no a cursor names, or undefined when it is not one this page gave out. */
export const decodeTargetCursor = (cursor: string): number | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (!Array.isArray(parsed) || parsed.length !== 1) return undefined
    const [n] = parsed as [unknown]
    return typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= 2 ** 31 - 1 ? n : undefined
  } catch {
    return undefined
  }
}
