import { Effect, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { FeatureLocked, RateLimited } from "../domain/errors.ts"
import { type Plan, planRatePerMinute, STARTER_IDENTITY_PER_MINUTE } from "../domain/plans.ts"
import { RateLimiter } from "./RateLimiter.ts"
import { RetryAfterHint } from "./RetryAfterHint.ts"

type Account = { readonly accountId: string; readonly plan: Plan; readonly planRatePerMinute: number | null }

/** A plan bucket holds ten seconds' worth of its rate: bursts stay small against a per-minute limit. */
const PLAN_BURST_SECONDS = 10

/**
 * The request limits of the contract: 300 requests/second per API key (RCS API), and the account's
 * plan rate shared by the public, /api/v1/app and GraphQL surfaces. A refusal sets Retry-After.
 */
export class ApiRateLimits extends Effect.Service<ApiRateLimits>()("herald/ApiRateLimits", {
  effect: Effect.gen(function*() {
    const limiter = yield* RateLimiter
    const config = yield* AppConfig
    const keyLimit = { rate: config.apiKeyRatePerSecond, capacity: config.apiKeyRateBurst }
    const keyRefusal = new RateLimited({
      message: `rate limit exceeded, ${config.apiKeyRatePerSecond} requests/second per key`,
      retry_after_sec: 1
    })

    const hint = (seconds: number) =>
      Effect.flatMap(Effect.serviceOption(RetryAfterHint), Option.match({ onNone: () => Effect.void, onSome: (state) => Effect.sync(() => state.retryAfter = seconds) }))

    /** One request with the API key `keyId`: the contract's Retry-After is 1 second. */
    const apiKey = (keyId: string) =>
      Effect.flatMap(limiter.check(`key:${keyId}`, keyLimit), (verdict) =>
        verdict.allowed ? Effect.void : Effect.zipRight(hint(1), Effect.fail(keyRefusal)))

    const bucket = (key: string, perMinute: number, plan: Plan) => {
      const limit = { rate: perMinute / 60, capacity: Math.max(1, Math.round((perMinute / 60) * PLAN_BURST_SECONDS)) }
      return Effect.flatMap(limiter.check(key, limit), (verdict) => {
        if (verdict.allowed) return Effect.void
        const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000))
        return Effect.zipRight(
          hint(seconds),
          Effect.fail(new RateLimited({ message: `rate limit exceeded, ${perMinute} requests/minute on the ${plan} plan`, retry_after_sec: seconds }))
        )
      })
    }

    /** One request of the account on a plan-limited surface. */
    const plan = (account: Account) =>
      Effect.suspend((): Effect.Effect<void, RateLimited | FeatureLocked> => {
        const perMinute = planRatePerMinute(account.plan, account.planRatePerMinute)
        if (perMinute === null) {
          return Effect.fail(new FeatureLocked({ message: `the ${account.plan} plan does not include API access; upgrade to Growth or above` }))
        }
        return bucket(`plan:${account.accountId}`, perMinute, account.plan)
      })

    /** GET /app/me: the plan bucket, or Starter's own small one (it has no API otherwise). */
    const identity = (account: Account) =>
      Effect.suspend(() => {
        const perMinute = planRatePerMinute(account.plan, account.planRatePerMinute)
        return perMinute === null ? bucket(`identity:${account.accountId}`, STARTER_IDENTITY_PER_MINUTE, account.plan) : bucket(`plan:${account.accountId}`, perMinute, account.plan)
      })

    return { apiKey, plan, identity } as const
  }),
  dependencies: [RateLimiter.Default]
}) {}
