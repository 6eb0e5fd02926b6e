import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Authentication.ts"
import { InvalidRequestResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"

/** A ledger row (presentWallet.ts, presentLedgerRow). */
export const LedgerTransaction = Schema.Struct({
  txn_id: Schema.String.annotations({ description: "The ledger row's id." }),
  kind: Schema.Literal("credit", "charge", "refund").annotations({
    description: "credit: money added to the wallet; charge: messages paid for; refund: a charge given back (a message the gateway took, then failed)."
  }),
  amount: Schema.Number.annotations({ description: "How much, in the wallet's currency: never negative; kind says which way the balance moved." }),
  balance_after: Schema.NullOr(Schema.Number).annotations({ description: "The balance right after this row; null on rows older than the ledger's running balance." }),
  reference: Schema.NullOr(Schema.String).annotations({
    description: "What the row is for: the message_id of one message's charge or refund, broadcast:<broadcast_id>:… for a broadcast's messages " +
      "charged together; null for a credit."
  }),
  created_at: Schema.String.annotations({ description: "When it was booked (ISO 8601, UTC)." })
}).annotations({ description: "A row of the wallet's ledger." })

const WALLET_TXN = {
  txn_id: "0f0dda63-fbd1-4a03-bfc0-c4798540a56f",
  kind: "charge",
  amount: 0.1,
  balance_after: 1249.9,
  reference: "0c9e7a52-4f1d-4b8e-9a3c-2d5e6f7a8b9c",
  created_at: "2026-03-02T10:15:29.231Z"
}

/** GET /api/v1/rcs/wallet: the balance and the ledger (owner; a JWT, never an API key). */
export class WalletApi extends HttpApiGroup.make("wallet")
  .add(
    HttpApiEndpoint.get("read", "/wallet")
      .setUrlParams(Schema.Struct({
        limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000), describe("Ledger rows on the page, 1 to 1,000: 100 by default."))),
        cursor: Schema.optional(Schema.String.annotations({ description: "The next_cursor of the previous page, passed back verbatim; absent or empty for the first page." }))
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        balance: Schema.Number.annotations({ description: "The balance now, in currency." }),
        currency: Schema.String.annotations({ description: "The wallet's currency, an ISO 4217 code (INR by default)." }),
        transactions: Schema.Array(LedgerTransaction).annotations({ description: "The ledger, newest first." }),
        next_cursor: Schema.String.annotations({ description: "Pass it as cursor for the next page; empty on the last page." })
      }))
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "Read the wallet",
        description: "The account's balance and its ledger, newest first, by cursor. Credits are added by the platform's operator; each " +
          "message is charged once, when the gateway takes it (several of a broadcast's in one row), and refunded if it fails after that. " +
          "The owner, with a user token (another role is 403 `forbidden`; API keys: 403 `api_key_endpoint_not_allowed`).",
        response: {
          success: true,
          balance: 1249.9,
          currency: "INR",
          transactions: [
            WALLET_TXN,
            { txn_id: "287a4aab-1746-416b-8221-7a2f25773fdd", kind: "credit", amount: 1250, balance_after: 1250, reference: null, created_at: "2026-03-01T08:00:00.000Z" }
          ],
          next_cursor: ""
        },
        returns: "The balance and a page of the ledger."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs")
  .annotate(OpenApi.Description, "The account's prepaid wallet: its balance and the ledger of credits, message charges and refunds (the owner's).") {}
