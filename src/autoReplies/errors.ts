import { Schema } from "effect"

/**
 * Why an inbound message fired nothing although a rule matched. Internal to `onInbound`: each is
 * logged, none reaches the callback (an auto-reply must never fail the gateway's callback).
 */
export class NotFired extends Schema.TaggedError<NotFired>()("NotFired", {
  reason: Schema.Literal("cooling_down", "already_fired", "template_unusable", "insufficient_balance"),
  detail: Schema.String
}) {}
