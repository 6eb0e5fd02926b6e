import { Config } from "effect"

/** How long a rotated endpoint's former secret keeps signing alongside the new one by default: 24 hours. */
export const SECRET_OVERLAP_DEFAULT_MS = 86_400_000

/**
 * HERALD_WEBHOOK_SECRET_OVERLAP_MS: the overlap after a rotation (docs/webhooks.md, Rotating the
 * signing secret), from 0 (the new secret alone at once) to 30 days. Read by the API nodes, which
 * stamp each rotation with its end; tests set it short to watch the window close.
 */
export const secretOverlapMs = Config.integer("HERALD_WEBHOOK_SECRET_OVERLAP_MS").pipe(
  Config.validate({
    message: "must be a whole number of milliseconds from 0 to 2592000000 (30 days)",
    validation: (n) => n >= 0 && n <= 30 * SECRET_OVERLAP_DEFAULT_MS
  }),
  Config.withDefault(SECRET_OVERLAP_DEFAULT_MS)
)
