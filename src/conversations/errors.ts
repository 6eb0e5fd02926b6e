import { Schema } from "effect"

/** 404 agent_not_found: no member of the account has that e-mail. */
export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", { message: Schema.String }) {}

/** 404 conversation_not_found: no open conversation with that customer. */
export class ConversationNotFound extends Schema.TaggedError<ConversationNotFound>()("ConversationNotFound", { message: Schema.String }) {}
