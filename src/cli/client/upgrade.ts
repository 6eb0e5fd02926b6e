import { Effect } from "effect"
import type { Connection } from "./config.ts"
import { fetchMe, isSuccess } from "./http.ts"
import { printError } from "./output.ts"

/**
 * After a 402 or 403: one line on stderr naming the account's plan (GET /app/me answers on every
 * plan; when it does not, the plan is named unknown) and where plans and prices are.
 */
export const printUpgradePrompt = (connection: Connection) =>
  fetchMe(connection.url, connection.key).pipe(
    Effect.map(({ answer, me }) => {
      const account = isSuccess(answer.status) ? me?.account : undefined
      const label = account?.label
      const plan = account?.plan
      return typeof plan === "string"
        ? `your account${typeof label === "string" ? ` ${JSON.stringify(label)}` : ""} is on the ${plan} plan`
        : "your account's plan is unknown"
    }),
    Effect.orElseSucceed(() => "your account's plan is unknown"),
    Effect.flatMap((plan) =>
      printError(`This needs a higher plan: ${plan}. Plans and prices: herald api GET /app/billing (GET /api/v1/app/billing).`)
    )
  )
