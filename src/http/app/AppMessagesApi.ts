import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidRequestResponse } from "../errors.ts"
import { NoWaNumberResponse, OutsideServiceWindowResponse } from "../public/PublicApi.ts"
import { AppAuthentication } from "./AppAuthentication.ts"

/** POST /api/v1/app/messages/send-text: a WhatsApp text through the public API's path and rules. */
export class AppMessagesApi extends HttpApiGroup.make("appMessages")
  .add(
    HttpApiEndpoint.post("sendText", "/messages/send-text")
      .setPayload(Schema.Struct({
        to: Schema.String.annotations({ description: "the customer's phone, E.164 with the country code, '+' optional" }),
        text: Schema.String.annotations({ description: "1 to 4096 characters" })
      }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), message_id: Schema.String, status: Schema.Literal("queued") }), { status: 202 })
      .addError(InvalidRequestResponse)
      .addError(NoWaNumberResponse)
      .addError(OutsideServiceWindowResponse)
      .annotate(OpenApi.Summary, "Send a WhatsApp text inside the customer's 24-hour window")
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app") {}
