import { Schema } from "effect"

/**
 * 403 bot_not_promotional: a bulk send with a bot registered for transactional or OTP messages.
 * Not fixable by retrying, topping up or waiting: such messages go one at a time.
 */
export class BotNotPromotional extends Schema.TaggedError<BotNotPromotional>()("BotNotPromotional", {
  message: Schema.String,
  bot_use_case: Schema.String,
  use_instead: Schema.String
}) {}
