import { Schema } from "effect"

export const Plan = Schema.Literal("starter", "growth", "advanced", "enterprise")
export type Plan = typeof Plan.Type

/**
 * Requests per minute shared by the public REST routes and GraphQL (contract, Limits). Starter has
 * no public API; Enterprise's rate is set per account (`herald admin set-plan ... --rate N`) and
 * defaults to Advanced's until it is.
 */
export const planRatePerMinute = (plan: Plan, enterpriseRate: number | null): number | null => {
  switch (plan) {
    case "starter":
      return null
    case "growth":
      return 300
    case "advanced":
      return 600
    case "enterprise":
      return enterpriseRate ?? 600
  }
}

/**
 * Starter has no API, but GET /api/v1/app/me answers its keys too (a client can always tell which
 * account and plan a key belongs to), from a bucket of this many requests a minute.
 */
export const STARTER_IDENTITY_PER_MINUTE = 60
