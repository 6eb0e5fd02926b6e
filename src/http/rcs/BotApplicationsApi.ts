import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, InvalidRequestResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"

const Text = (max: number) => Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(max))

/** POST /api/v1/rcs/apply (contract; DESIGN.md, Bots). */
export class BotApplicationsApi extends HttpApiGroup.make("botApplications")
  .add(
    HttpApiEndpoint.post("apply", "/apply")
      .setPayload(Schema.Struct({
        bot_name: Text(100).pipe(describe("The bot's name as users will see it, 1 to 100 characters.")),
        company_name: Text(200).pipe(describe("The brand's legal name, 1 to 200 characters.")),
        // Checked (checksum, state code) by the handler, which names what is wrong.
        company_gstin: Schema.String.pipe(Schema.maxLength(64), describe("The company's GSTIN: 15 characters with a valid state code and check character (spaces and case do not matter). Belongs to the first account that applies with it.")),
        brand_website: Schema.String.pipe(Schema.maxLength(2048), describe("The brand's website, http(s) with a domain. Belongs to the first account that applies with it.")),
        use_case: Schema.Literal("promotional", "transactional", "otp").annotations({ description: "What the bot will send: only promotional bots broadcast." })
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        bot_id: Schema.String.annotations({ description: "The new bot's id." }),
        status: Schema.Literal("pending").annotations({ description: "Always pending: the platform's operator approves or rejects it." })
      }))
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "Apply for a new RCS bot",
        description: "An operator or the owner who sees every bot, with a user token. The bot starts pending until the platform's " +
          "operator decides. A GSTIN or website another account applied with is 409 `conflict` with `key` naming the field.",
        request: { bot_name: "Acme Orders", company_name: "Acme Retail Pvt Ltd", company_gstin: "27AAPFU0939F1ZV", brand_website: "https://acme.example.com", use_case: "transactional" },
        response: { success: true, bot_id: "1b2c3d4e-5f60-4718-89ab-cdef01234567", status: "pending" },
        returns: "The bot, pending approval."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs")
  .annotate(OpenApi.Description, "Applying for RCS bots (the platform's operator approves them).") {}
