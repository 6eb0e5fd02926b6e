import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { MAX_OPT_KEYWORD_LENGTH, MAX_OPT_KEYWORDS, OPT_IN_KEYWORDS, OPT_OUT_KEYWORDS } from "../../customers/optOut.ts"
import { InvalidRequestResponse } from "../errors.ts"
import { documented } from "../openApiAnnotations.ts"
import { AppAuthentication } from "./AppAuthentication.ts"

const Keywords = (what: string) =>
  Schema.Array(Schema.String).annotations({
    description: `${what} Each as a keyword: upper case, letters and digits only (what a customer's message is compared with).`
  })

const OptKeywordsAnswer = Schema.Struct({
  success: Schema.Literal(true),
  opt_out: Keywords("A customer's message that is, as a whole, one of these opts them out of marketing."),
  opt_in: Keywords("One of these opts them back in."),
  custom: Schema.Boolean.annotations({ description: "Whether these are the account's own lists (false: Herald's defaults)." }),
  updated_at: Schema.NullOr(Schema.String).annotations({ description: "When the account last set its lists (ISO 8601); null for the defaults." })
})

const DEFAULTS = { success: true, opt_out: [...OPT_OUT_KEYWORDS], opt_in: [...OPT_IN_KEYWORDS], custom: false, updated_at: null }
const CUSTOM = { success: true, opt_out: ["STOP", "BAJA", "PARAR"], opt_in: ["START", "ALTA"], custom: true, updated_at: "2026-11-29T08:00:00.000Z" }

/** GET/PUT/DELETE /api/v1/app/opt-out-keywords: the words by which customers opt out of marketing (docs/opt-outs.md). */
export class OptKeywordsApi extends HttpApiGroup.make("appOptKeywords")
  .add(
    HttpApiEndpoint.get("getOptKeywords", "/opt-out-keywords")
      .addSuccess(OptKeywordsAnswer)
      .annotateContext(documented({
        summary: "Read the opt-out and opt-in keywords",
        description: "The keywords by which the account's customers opt out of marketing and back in: its own lists, or the defaults (Twilio's " +
          "Advanced Opt-Out list; START and UNSTOP). A secret key, on Growth and up.",
        response: DEFAULTS,
        returns: "The account's keywords."
      }))
  )
  .add(
    HttpApiEndpoint.put("setOptKeywords", "/opt-out-keywords")
      .setPayload(Schema.Struct({
        opt_out: Schema.Array(Schema.String).annotations({
          description: `1 to ${MAX_OPT_KEYWORDS} keywords. Case, spaces and punctuation are ignored ("Opt-out" is OPTOUT); each must hold a letter or a ` +
            `digit and at most ${MAX_OPT_KEYWORD_LENGTH} of them. The list replaces the defaults: include STOP to keep it.`
        }),
        opt_in: Schema.Array(Schema.String).annotations({ description: `0 to ${MAX_OPT_KEYWORDS} keywords, none of them also an opt-out keyword.` })
      }))
      .addSuccess(OptKeywordsAnswer)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Set the opt-out and opt-in keywords",
        description: "Replaces the account's lists; every node uses them for the next inbound message. An empty opt-out list, an entry that is not a " +
          "keyword or a keyword in both lists is 400 naming each. A secret key, on Growth and up.",
        request: { opt_out: ["STOP", "Baja", "parar"], opt_in: ["START", "Alta"] },
        response: CUSTOM,
        returns: "The lists as stored."
      }))
  )
  .add(
    HttpApiEndpoint.del("resetOptKeywords", "/opt-out-keywords")
      .addSuccess(OptKeywordsAnswer)
      .annotateContext(documented({
        summary: "Go back to the default keywords",
        description: "Drops the account's own lists: the defaults apply from the next inbound message. A secret key, on Growth and up.",
        response: DEFAULTS,
        returns: "The defaults."
      }))
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app")
  .annotate(OpenApi.Description, "The keywords by which customers opt out of marketing and back in (docs/opt-outs.md).") {}
