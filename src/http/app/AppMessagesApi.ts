import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidRequestResponse } from "../errors.ts"
import { documented } from "../openApiAnnotations.ts"
import { NoWaNumberResponse, OutsideServiceWindowResponse } from "../public/PublicApi.ts"
import { AppAuthentication } from "./AppAuthentication.ts"

/** POST /api/v1/app/messages/send-text: a WhatsApp text through the public API's path and rules. */
export class AppMessagesApi extends HttpApiGroup.make("appMessages")
  .add(
    HttpApiEndpoint.post("sendText", "/messages/send-text")
      .setPayload(Schema.Struct({
        to: Schema.String.annotations({ description: "The customer's phone with its country code (E.164; the '+' optional, spaces and dashes allowed)." }),
        text: Schema.String.annotations({ description: "The message, 1 to 4,096 characters." })
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        message_id: Schema.String.annotations({ description: "The message's id: the developer webhook's message.* events about it carry it as id." }),
        status: Schema.Literal("queued").annotations({ description: "Always queued: the message will leave from the account's default WhatsApp number." })
      }), { status: 202 })
      .addError(InvalidRequestResponse)
      .addError(NoWaNumberResponse)
      .addError(OutsideServiceWindowResponse)
      .annotateContext(documented({
        summary: "Send a WhatsApp text inside the customer's 24-hour window",
        description: "POST /api/v1/public/message with type `Text`, from the account's default WhatsApp number: the same checks (a 400 names `to` " +
          "and `text`), the 24-hour customer service window (422 `outside_service_window` when the customer has not written in the last 24 hours), " +
          "409 `no_wa_number` when the account has no number, and the same events to the developer webhook (message.sent, message.delivered, " +
          "message.read, message.failed). A text inside the window is free. Takes an Idempotency-Key. A secret key, on Growth and up.",
        request: { to: "+919812345678", text: "Your order A-1234 has shipped and will reach you tomorrow." },
        response: { success: true, message_id: "7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b", status: "queued" },
        returns: "Accepted: the message is queued."
      }))
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app")
  .annotate(OpenApi.Description, "Sending a WhatsApp text to a customer with the secret key (docs/app-api.md, Send a text).") {}
