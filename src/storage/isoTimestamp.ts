/** A timestamp column as the API shows it: ISO 8601 in UTC, or null. */
export const isoOrNull = (date: Date | string | null): string | null => (date === null ? null : new Date(date).toISOString())
