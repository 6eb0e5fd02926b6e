import { Context, Effect } from "effect"
import { createHash, randomUUID } from "node:crypto"

/** The Idempotency-Key the request being handled runs under (with whose keys it is), when it has one. */
export class RequestKey extends Context.Tag("herald/http/RequestKey")<RequestKey, { readonly scope: string; readonly key: string }>() {}

/**
 * The id of what a request creates: derived from its Idempotency-Key when it has one, so that the
 * same request sent again names the same thing (a send answered 503 because its command went
 * unanswered may still have been stored: sent again with its key, its command carries the same
 * message id, which JetStream and the gateway drop as a repeat); a new one otherwise.
 */
export const idFor = (purpose: string): Effect.Effect<string> =>
  Effect.map(Effect.serviceOption(RequestKey), (keyed) => {
    if (keyed._tag === "None") return randomUUID()
    const hex = createHash("sha256").update(`${keyed.value.scope}\n${keyed.value.key}\n${purpose}`).digest("hex")
    // A UUID's layout (version 8: custom), so it fits every uuid column and check.
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
  })
