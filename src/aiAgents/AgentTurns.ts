import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { PublicMessages } from "../whatsapp/PublicMessages.ts"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import { type InboundTurn, InboundTurns } from "../whatsapp/inbound/InboundTurns.ts"
import { type InboundReply, WaInboundRepo } from "../whatsapp/inbound/WaInboundRepo.ts"
import { decide } from "./agentRules.ts"
import { AiAgentsRepo } from "./AiAgentsRepo.ts"

/** An answer an agent owes a customer, decided with the inbound message and sent once it committed. */
export type AgentReply = InboundReply

/**
 * An AI agent's turn on a customer's message (docs/app-api.md, AI agents). `take` runs inside the
 * inbound message's transaction, so what the agent decided is stored with the message, or not at
 * all: a handoff unassigns the conversation and emits `conversation.handoff` through the outbox;
 * an answer is recorded on the message (wa_inbound.ai_reply) with its message id. `deliver` sends
 * that answer after the commit, through the public API's send path (the window, the number's
 * sender actor). If the node dies in between, Meta repeats the webhook (it was never answered)
 * and `redeliver` sends the recorded answer under the same message id, unless the sender already
 * has it: the customer gets it once.
 */
export class AgentTurns extends Effect.Service<AgentTurns>()("herald/aiAgents/AgentTurns", {
  effect: Effect.gen(function*() {
    const conversations = yield* ConversationsRepo
    const inbound = yield* WaInboundRepo
    const agents = yield* AiAgentsRepo
    const webhooks = yield* Webhooks
    const messages = yield* PublicMessages

    const take = (turn: InboundTurn) =>
      Effect.gen(function*() {
        // The conversation's row is already locked by the inbound's upsert: turns of one
        // conversation run one after another.
        const agent = yield* agents.activeOfConversation(turn.conversationId)
        if (agent === undefined) return undefined
        const decision = decide(agent, turn.text)
        if (decision._tag === "Handoff") {
          yield* conversations.handOff(turn.conversationId)
          yield* webhooks.emit({
            accountId: turn.accountId,
            type: "conversation.handoff",
            botId: null,
            channel: "whatsapp",
            data: { conversation_id: turn.conversationId, ai_agent_id: agent.agentId, reason: decision.reason, text: turn.text }
          })
          return undefined
        }
        const reply: AgentReply = { agentId: agent.agentId, messageId: randomUUID(), text: decision.answer }
        yield* inbound.recordReply(turn.wamid, reply)
        return reply
      }).pipe(Effect.orDie)

    /** Sends a committed answer; a refusal (the window closed for a message Meta delivered late) is logged, not retried. */
    const deliver = (turn: Pick<InboundTurn, "accountId" | "phoneNumberId" | "phone">, reply: AgentReply) =>
      messages.send(
        { accountId: turn.accountId },
        { fullPhoneNumber: turn.phone, type: "Text", data: { message: reply.text }, fromPhoneNumberId: turn.phoneNumberId },
        reply.messageId
      ).pipe(
        Effect.asVoid,
        Effect.catchAll((error) =>
          Effect.logWarning("AI agent answer not sent", { ai_agent_id: reply.agentId, message_id: reply.messageId, reason: error.message }))
      )

    /** A repeated webhook of a recorded message: its answer again, if the sender never got it. */
    const redeliver = (turn: Pick<InboundTurn, "accountId" | "phoneNumberId" | "phone" | "wamid">) =>
      Effect.gen(function*() {
        const row = yield* inbound.recordedReply(turn.wamid)
        if (row === undefined || row.aiReply === null || row.queued) return
        yield* deliver(turn, row.aiReply)
      })

    return { take, deliver, redeliver } as const
  }),
  dependencies: [PublicMessages.Default, ConversationsRepo.Default, WaInboundRepo.Default, AiAgentsRepo.Default, Webhooks.Default]
}) {}

/** The AI agents as the inbound handling's turns (src/whatsapp/inbound/InboundTurns.ts). */
export const AgentInboundTurns = Layer.effect(InboundTurns, AgentTurns).pipe(Layer.provide(AgentTurns.Default))
