/** The SQLSTATE of a failed statement (the pg driver's `code`), e.g. 23505 unique_violation. */
export const sqlState = (error: { readonly cause?: unknown }): string | undefined => (error.cause as { code?: string } | undefined)?.code

/** 55P03 lock_not_available: a NOWAIT lock another transaction holds. */
export const LOCK_NOT_AVAILABLE = "55P03"

/** 23505 unique_violation: a row with that key exists. */
export const isUniqueViolation = (error: { readonly cause?: unknown }) => sqlState(error) === "23505"
