import { Context, type Effect } from "effect"
import type { InboundReply } from "./WaInboundRepo.ts"

/** A customer's message, as a turn of whoever answers the conversation besides the team. */
export interface InboundTurn {
  readonly accountId: string
  readonly phoneNumberId: string
  readonly conversationId: string
  /** The customer (E.164). */
  readonly phone: string
  /** Meta's id of the inbound message. */
  readonly wamid: string
  readonly text: string | null
}

/**
 * What answers a customer's message besides the team: an AI agent (src/aiAgents/AgentTurns.ts
 * provides it). Declared here, on the side that calls it, so the inbound handling does not import
 * the AI agents, which send their answers through WhatsApp. `take` runs in the inbound message's
 * transaction; `deliver` sends a committed answer; `redeliver` sends it again for a repeated
 * webhook, unless the sender already has it.
 */
export class InboundTurns extends Context.Tag("herald/whatsapp/InboundTurns")<InboundTurns, {
  readonly take: (turn: InboundTurn) => Effect.Effect<InboundReply | undefined>
  readonly deliver: (turn: Pick<InboundTurn, "accountId" | "phoneNumberId" | "phone">, reply: InboundReply) => Effect.Effect<void>
  readonly redeliver: (turn: Pick<InboundTurn, "accountId" | "phoneNumberId" | "phone" | "wamid">) => Effect.Effect<void>
}>() {}
