import { Effect } from "effect"
import { InvalidRequest } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { readCustomerPhone } from "../customers/customerShape.ts"
import { type Assignee, ConversationsRepo } from "./ConversationsRepo.ts"
import { AgentNotFound, ConversationNotFound } from "./errors.ts"

/** The customer by phone: fullPhoneNumber (Interakt's name) or phone (the answers' name). */
export interface CustomerByPhone {
  readonly fullPhoneNumber?: string | undefined
  readonly phone?: string | undefined
}

export interface AssignInput extends CustomerByPhone {
  readonly agentEmail: string
  readonly phoneNumberId?: string | undefined
}

/**
 * A conversation is one per (WhatsApp number, customer), opened and reopened by the customer's
 * messages (WaReports). Here: who on the team handles it, and resolving it.
 */
export class Conversations extends Effect.Service<Conversations>()("herald/conversations/Conversations", {
  effect: Effect.gen(function*() {
    const repo = yield* ConversationsRepo

    /** The open conversation with a customer: on the given number, else the most recently active one. */
    const openWith = (accountId: string, phone: string, phoneNumberId: string | undefined) =>
      Effect.gen(function*() {
        const conversationId = yield* repo.openWith(accountId, phone, phoneNumberId)
        if (conversationId === undefined) {
          return yield* new ConversationNotFound({ message: `no open conversation with ${phone}${phoneNumberId === undefined ? "" : ` on number ${phoneNumberId}`}` })
        }
        return conversationId
      })

    /** A member of the account by e-mail (any role: whoever answers chats; not a person still invited). */
    const agentOf = (accountId: string, email: string) =>
      Effect.gen(function*() {
        const agent = yield* repo.memberByEmail(accountId, email)
        if (agent === undefined) return yield* new AgentNotFound({ message: `no member of this account has the e-mail ${email.trim()}` })
        return agent
      })

    /** An AI agent of the account by id (`ai:<id>`), active or not. */
    const aiAgentOf = (accountId: string, agentId: string) =>
      Effect.gen(function*() {
        const agent = isUuid(agentId) ? yield* repo.aiAgentOf(accountId, agentId) : undefined
        if (agent === undefined) return yield* new AgentNotFound({ message: `this account has no AI agent ${agentId}` })
        return agent
      })

    /** Who an agentEmail names: a member by e-mail, an AI agent as `ai:<id>`, nobody (unassign) when empty. */
    const assigneeOf = (accountId: string, agentEmail: string) =>
      Effect.gen(function*(): Effect.fn.Return<Assignee, InvalidRequest | AgentNotFound> {
        if (agentEmail.length > 320) return yield* InvalidRequest.single("agentEmail", "must be an e-mail address, ai:<agent id>, or empty to unassign")
        const named = agentEmail.trim()
        if (named === "") return { user: null, ai: null }
        if (named.toLowerCase().startsWith("ai:")) return { user: null, ai: yield* aiAgentOf(accountId, named.slice(3).trim()) }
        return { user: yield* agentOf(accountId, named), ai: null }
      })

    const setAssignee = (conversationId: string, agent: Assignee) =>
      Effect.gen(function*() {
        yield* repo.setAssignee(conversationId, agent)
        return (yield* repo.find(conversationId))!
      })

    /** POST /api/v1/public/chats/assign: an empty agentEmail unassigns. */
    const assign = (accountId: string, input: AssignInput) =>
      Effect.gen(function*() {
        const agent = yield* assigneeOf(accountId, input.agentEmail)
        const phone = yield* readCustomerPhone(input)
        return yield* setAssignee(yield* openWith(accountId, phone, input.phoneNumberId), agent)
      })

    /** GraphQL's assignConversation: an open conversation by id (a resolved one is not assignable, as by phone). */
    const assignById = (accountId: string, conversationId: string, agentEmail: string) =>
      Effect.gen(function*() {
        const agent = yield* assigneeOf(accountId, agentEmail)
        const found = isUuid(conversationId) ? yield* repo.findOfAccount(accountId, conversationId) : undefined
        if (found === undefined || found.status !== "open") return yield* new ConversationNotFound({ message: `no open conversation ${conversationId}` })
        return yield* setAssignee(conversationId, agent)
      })

    /** Resolves an open conversation by id (GraphQL's resolveConversation); a resolved one stays as it is. */
    const resolve = (accountId: string, conversationId: string) =>
      Effect.gen(function*() {
        const found = isUuid(conversationId) ? yield* repo.findOfAccount(accountId, conversationId) : undefined
        if (found === undefined) return yield* new ConversationNotFound({ message: `no conversation ${conversationId}` })
        if (found.status === "resolved") return found
        yield* repo.resolve(conversationId)
        return (yield* repo.find(conversationId))!
      })

    /** POST /api/v1/public/chats/resolve: the open conversation with a customer. */
    const resolveWith = (accountId: string, input: CustomerByPhone & { readonly phoneNumberId?: string | undefined }) =>
      Effect.gen(function*() {
        const phone = yield* readCustomerPhone(input)
        return yield* resolve(accountId, yield* openWith(accountId, phone, input.phoneNumberId))
      })

    return { assign, assignById, resolve, resolveWith } as const
  }),
  dependencies: [ConversationsRepo.Default]
}) {}
