import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Plan } from "../../domain/plans.ts"
import { AppAuthentication } from "./AppAuthentication.ts"

/** GET /api/v1/app/me: which account a secret key acts for, and its plan's request rate. */
export class AccountApi extends HttpApiGroup.make("appAccount")
  .add(
    HttpApiEndpoint.get("me", "/me").addSuccess(Schema.Struct({
      success: Schema.Literal(true),
      account: Schema.Struct({
        account_id: Schema.String,
        label: Schema.String,
        plan: Plan,
        rate_limit_per_minute: Schema.Number
      })
    }))
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app") {}
