import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Authentication.ts"
import { InvalidRequestResponse } from "../errors.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"

/** A ledger row (src/wallet/Wallet.ts, presentLedgerRow). */
export const LedgerTransaction = Schema.Struct({
  txn_id: Schema.String,
  kind: Schema.Literal("credit", "charge", "refund"),
  amount: Schema.Number,
  balance_after: Schema.NullOr(Schema.Number),
  reference: Schema.NullOr(Schema.String),
  created_at: Schema.String
})

/** GET /api/v1/rcs/wallet: the balance and the ledger (owner; a JWT, never an API key). */
export class WalletApi extends HttpApiGroup.make("wallet")
  .add(
    HttpApiEndpoint.get("read", "/wallet")
      .setUrlParams(Schema.Struct({
        limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000))),
        cursor: Schema.optional(Schema.String)
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        balance: Schema.Number,
        currency: Schema.String,
        transactions: Schema.Array(LedgerTransaction),
        next_cursor: Schema.String
      }))
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs") {}
