import { Effect } from "effect"
import type { Connection } from "./config.ts"
import { answerJson, apiUrl, isSuccess, send } from "./http.ts"
import { printError } from "./output.ts"

interface Me {
  readonly account?: { readonly label?: unknown; readonly plan?: unknown }
}

/**
 * After a 402 or 403: one line on stderr naming the account's plan (GET /app/me answers on every
 * plan; when it does not, the plan is named unknown) and where plans and prices are.
 */
export const printUpgradePrompt = (connection: Connection) =>
  send({ method: "GET", url: apiUrl(connection.url, "app/me"), key: connection.key }).pipe(
    Effect.map((answer) => {
      const me = isSuccess(answer.status) ? (answerJson(answer) as Me | undefined) : undefined
      const label = me?.account?.label
      const plan = me?.account?.plan
      return typeof plan === "string"
        ? `your account${typeof label === "string" ? ` ${JSON.stringify(label)}` : ""} is on the ${plan} plan`
        : "your account's plan is unknown"
    }),
    Effect.orElseSucceed(() => "your account's plan is unknown"),
    Effect.flatMap((plan) =>
      printError(`This needs a higher plan: ${plan}. Plans and prices: herald api GET /app/billing (GET /api/v1/app/billing).`)
    )
  )
