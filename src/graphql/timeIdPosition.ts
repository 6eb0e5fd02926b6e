import { isUtcMicros } from "../domain/timestamps.ts"

/** A position in a list ordered by (time, text id), newest first: messages (a wamid or a uuid) and calls (Meta's call id). */
export interface TimeIdPosition {
  readonly at: string
  readonly id: string
}

export const timeIdFrom = (values: ReadonlyArray<unknown>): TimeIdPosition | undefined => {
  if (values.length !== 2) return undefined
  const [at, id] = values
  return typeof at === "string" && isUtcMicros(at) && typeof id === "string" && id.length > 0 && id.length <= 512 ? { at, id } : undefined
}
