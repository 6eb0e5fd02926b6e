import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { HOURS, OVERVIEW_STATUSES } from "../../overview/Overview.ts"
import { Authentication } from "../Authentication.ts"
import { InvalidRequestResponse } from "../errors.ts"
import { documented } from "../openApiAnnotations.ts"

const count = (description: string) => Schema.Int.annotations({ description })

const ByStatus = Schema.Struct(
  Object.fromEntries(OVERVIEW_STATUSES.map((status) => [status, count(`Today's messages now ${status}.`)])) as Record<(typeof OVERVIEW_STATUSES)[number], typeof Schema.Int>
).annotations({ description: "Today's messages by the status they have now (a WhatsApp message Meta accepted counts as sent)." })

const Hour = Schema.Struct({
  hour: Schema.String.annotations({ description: "The hour's start (ISO 8601, UTC)." }),
  sent: count("Messages sent in that hour (the gateway or Meta took them)."),
  failed: count("Messages that failed in that hour.")
})

const HOURS_EXAMPLE = Array.from({ length: HOURS }, (_, i) => ({
  hour: new Date(Date.UTC(2026, 2, 1, 11 + i)).toISOString(),
  sent: i === HOURS - 1 ? 420 : 300 + ((i * 37) % 200),
  failed: (i * 7) % 9
}))

/** The account at a glance: what the console's overview shows (src/overview/Overview.ts). */
export class OverviewApi extends HttpApiGroup.make("overview")
  .add(
    HttpApiEndpoint.get("read", "/overview")
      .setUrlParams(Schema.Struct({
        tz: Schema.optional(Schema.String.annotations({
          description: "The IANA time zone whose midnight starts \"today\" (Asia/Kolkata, Europe/Berlin…); UTC when absent."
        }))
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        account: Schema.Struct({
          account_id: Schema.String.annotations({ description: "The account's id." }),
          label: Schema.String.annotations({ description: "The account's name." }),
          plan: Schema.String.annotations({ description: "Its plan: starter, growth, advanced or enterprise." })
        }).annotations({ description: "The account." }),
        wallet: Schema.NullOr(Schema.Struct({
          balance: Schema.Number.annotations({ description: "What is left to spend." }),
          currency: Schema.String.annotations({ description: "ISO 4217 code of the balance." })
        })).annotations({ description: "The wallet, for the owner (billing is the owner's); null for other roles." }),
        messages_today: Schema.Struct({
          since: Schema.String.annotations({ description: "Today's start: the last midnight in `tz` (ISO 8601, UTC)." }),
          total: count("Today's messages in all."),
          by_status: ByStatus
        }).annotations({
          description: "Messages created today (a broadcast's: sent or failed today): RCS single sends, the messages of broadcasts, and, for " +
            "a member who sees every bot, WhatsApp messages. A member limited to some bots counts those bots' only."
        }),
        last_24_hours: Schema.Array(Hour).annotations({ description: `Sends and failures per hour, ${HOURS} hours oldest first, the current one last.` })
      }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "The account at a glance",
        description: "The plan, the wallet (to the owner), today's messages by status and the last 24 hours' sends and failures per hour, " +
          "counted from the messages' rows (kept 15 s per node). Any role, with a user token. What the console's overview shows.",
        response: {
          success: true,
          account: { account_id: "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", label: "Acme Retail", plan: "growth" },
          wallet: { balance: 1250.5, currency: "INR" },
          messages_today: { since: "2026-03-01T18:30:00.000Z", total: 5230, by_status: { queued: 4, unconfirmed: 1, sent: 610, delivered: 1900, read: 2650, failed: 65 } },
          last_24_hours: HOURS_EXAMPLE
        },
        returns: "The overview."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs")
  .annotate(OpenApi.Description, "The account at a glance (the console's overview).") {}
