import { Effect } from "effect"
import type { GraphQLResolveInfo } from "graphql"
import type { TraitFilter as ParsedTraitFilter } from "../customers/traitFilters.ts"
import { parseCustomerQuery } from "../customers/traitFilters.ts"
import { describeIssues, FieldIssue, InvalidRequest, NotFound, renameFields } from "../domain/errors.ts"
import { planRatePerMinute } from "../domain/plans.ts"
import { readE164 } from "../messaging/phone.ts"
import { broadcastsScope, targetsScope } from "../broadcasts/Broadcasts.ts"
import { customersScope } from "../customers/Customers.ts"
import { isIntegerKey } from "../storage/keyCursor.ts"
import type { CursorScope } from "../storage/ListCursors.ts"
import { positionFrom } from "../storage/pageCursor.ts"
import { waTemplatesScope } from "../whatsapp/templates/WaTemplates.ts"
import type { BroadcastRow } from "../broadcasts/BroadcastsRepo.ts"
import { limitOf, listCursors, type PageArgs } from "./connections.ts"
import { timeIdFrom } from "./timeIdPosition.ts"
import { ledgerScope } from "../wallet/Wallet.ts"
import { inboundContent } from "./messageContent.ts"
import type { GraphqlContext } from "./context.ts"
import {
  byStatusOf,
  callNode,
  contactNode,
  type ContactNode,
  conversationNode,
  type ConversationNode,
  iso,
  lastMessageNode,
  ledgerNode,
  type CallNode,
  messageStatus,
  type MessageNode,
  messageNode,
  sentContent,
  targetNode,
  targetStatusesOf,
  templateNode,
  upper,
  broadcastNode
} from "./nodes.ts"

/** The cursors of GraphQL's own lists (the others share REST's: ledgerScope, customersScope, …). */
const conversationsScope = (accountId: string): CursorScope => ({ list: "conversations", accountId })
const messagesScope = (accountId: string, conversationId: string): CursorScope => ({ list: `conversation-messages:${conversationId}`, accountId })
const callsScope = (accountId: string): CursorScope => ({ list: "calls", accountId })

/** GraphQL's trait filter (enum ops, JSON values) in the REST search's shape, checked by the same code. */
const customerQueryOf = (filter: { search?: string | null; tags?: ReadonlyArray<string> | null; traits?: ReadonlyArray<{ trait: string; op: string; value?: unknown }> | null } | null | undefined) => {
  const parsed = parseCustomerQuery({
    filters: filter?.traits?.map((t) => ({ trait: t.trait, op: t.op.toLowerCase(), value: t.value })),
    tags: filter?.tags ?? undefined
  })
  if ("issues" in parsed) {
    const errors = parsed.issues.map((issue) => new FieldIssue({ path: `filter.${issue.path.replace(/^filters/, "traits")}`, message: issue.message }))
    throw new InvalidRequest({ message: describeIssues(errors), errors })
  }
  return { filters: parsed.filters as ReadonlyArray<ParsedTraitFilter>, tags: parsed.tags, search: filter?.search ?? undefined }
}

type Args = Record<string, any>
type Resolver<P = unknown> = (parent: P, args: Args, context: GraphqlContext, info: GraphQLResolveInfo) => unknown

/** Resolvers by type and field, attached to the SDL's schema (schema.ts). */
export const resolvers: Record<string, Record<string, Resolver<any>>> = {
  Query: {
    me: async (_, __, { account, run, services }) => {
      const row = await run(services.reads.me(account.accountId))
      return {
        account_id: row.accountId,
        label: row.label,
        plan: upper(row.plan),
        rate_limit_per_minute: planRatePerMinute(account.plan, row.planRatePerMinute),
        wallet: { balance: Number(row.walletBalance), currency: row.currency }
      }
    },
    wallet: async (_, __, { account, run, services }) => {
      const row = await run(services.reads.me(account.accountId))
      return { balance: Number(row.walletBalance), currency: row.currency }
    },
    walletTransactions: async (_, { page }: { page?: PageArgs }, context) => {
      const { account, run, services } = context
      const list = listCursors(context, ledgerScope(account.accountId))
      const limit = limitOf(page)
      const rows = await run(services.reads.ledger(account.accountId, await list.read(page, positionFrom), limit))
      return list.connection(rows, limit, (row) => [row.position, row.txnId], ledgerNode)
    },
    contact: async (_, { id }, { loaders }) => {
      const row = await loaders.contact.load(id)
      return row === undefined ? notFoundContact(id) : contactNode(row)
    },
    contacts: async (_, { filter, page }, context) => {
      const { account, run, services } = context
      const list = listCursors(context, customersScope(account.accountId))
      const limit = limitOf(page)
      const query = customerQueryOf(filter)
      const rows = await run(services.reads.contacts(account.accountId, query, await list.read(page, positionFrom), limit))
      return list.connection(rows, limit, (row) => [row.position, row.customerId], contactNode)
    },
    conversation: async (_, { id }, { loaders }) => {
      const row = await loaders.conversation.load(id)
      return row === undefined ? notFoundConversation(id) : conversationNode(row)
    },
    conversations: async (_, { filter, page }, context) => {
      const { account, run, services } = context
      const list = listCursors(context, conversationsScope(account.accountId))
      const limit = limitOf(page)
      const after = await list.read(page, positionFrom)
      const rows = await run(services.reads.conversations(account.accountId, {
        status: filter?.status ? filter.status.toLowerCase() : undefined,
        assigneeEmail: filter?.assignee_email ?? undefined,
        unassigned: filter?.unassigned ?? undefined
      }, after, limit))
      return list.connection(rows, limit, (row) => [row.position, row.conversationId], conversationNode)
    },
    messages: async (_, { conversationId, page }, context, info) => {
      const conversation = await context.loaders.conversation.load(conversationId)
      if (conversation === undefined) return notFoundConversation(conversationId)
      return resolvers.Conversation!.messages!(conversationNode(conversation), { page }, context, info)
    },
    template: async (_, { id }, { loaders }) => {
      const row = await loaders.template.load(id)
      if (row === undefined) throw new NotFound({ message: `no template ${id}` })
      return templateNode(row)
    },
    templates: async (_, { status, category, page }, context) => {
      const { account, run, services } = context
      const list = listCursors(context, waTemplatesScope(account.accountId))
      const limit = limitOf(page)
      const rows = await run(services.reads.templatePage(account.accountId, status ?? undefined, category ?? undefined, await list.read(page, positionFrom), limit))
      return list.connection(rows, limit, (row) => [row.position, row.templateId], templateNode)
    },
    broadcast: async (_, { id }, { account, run, services }) => {
      const row = await run(services.reads.broadcast(account.accountId, id))
      return row === undefined ? notFoundBroadcast(id) : broadcastNode(row)
    },
    broadcasts: async (_, { filter, page }, context) => {
      const { account, run, services } = context
      const list = listCursors(context, broadcastsScope(account.accountId))
      const limit = limitOf(page)
      const rows = await run(services.reads.broadcastPage(account.accountId, {
        status: filter?.status ? filter.status.toLowerCase() : undefined,
        botId: filter?.bot_id ?? undefined
      }, await list.read(page, positionFrom), limit))
      return list.connection(rows, limit, (row) => [row.position, row.broadcastId], broadcastNode)
    },
    broadcastReport: async (_, { id }, { account, run, services }) => {
      const row = await run(services.reads.broadcast(account.accountId, id))
      return row === undefined ? notFoundBroadcast(id) : { row, broadcast: broadcastNode(row), by_status: byStatusOf(row) }
    },
    call: async (_, { id }, { loaders }) => {
      const row = await loaders.call.load(id)
      if (row === undefined) throw new NotFound({ message: `no call ${id}` })
      return callNode(row)
    },
    calls: async (_, { filter, page }, context) => {
      const { account, run, services } = context
      const list = listCursors(context, callsScope(account.accountId))
      const limit = limitOf(page)
      const after = await list.read(page, timeIdFrom)
      const rows = await run(services.reads.calls(account.accountId, { status: filter?.status ?? undefined, direction: filter?.direction ?? undefined }, after, limit))
      return list.connection(rows, limit, (row) => [row.position, row.callId], callNode)
    }
  },
  BroadcastReport: {
    targets: async (report: { readonly row: BroadcastRow }, { page, status }, context) => {
      const list = listCursors(context, targetsScope(context.account.accountId, report.row.broadcastId))
      const limit = limitOf(page)
      const before = await list.read(page, (values) => (values.length === 1 && isIntegerKey(values[0]) ? values[0] : undefined))
      const rows = await context.run(context.services.reads.broadcastTargets(report.row.broadcastId, status ? targetStatusesOf(status) : undefined, before, limit))
      return list.connection(rows, limit, (row) => [row.targetNo], targetNode)
    }
  },
  Call: {
    // Through the request's conversation loader: a page of calls loads its conversations in one statement.
    conversation: async (node: CallNode, _, { loaders }) => {
      const row = await loaders.conversation.load(node.conversationId)
      return row === undefined ? null : conversationNode(row)
    }
  },
  Contact: {
    id: (node: ContactNode) => node.row.customerId,
    contact_id: (node: ContactNode) => node.row.customerId,
    name: (node: ContactNode) => node.row.name,
    phone: (node: ContactNode) => node.row.phone,
    user_id: (node: ContactNode) => node.row.userId,
    tags: (node: ContactNode) => node.row.tags,
    traits: (node: ContactNode) => node.row.traits,
    created_at: (node: ContactNode) => iso(node.row.createdAt),
    last_seen_at: (node: ContactNode) => (node.row.lastSeenAt === null ? null : iso(node.row.lastSeenAt)),
    conversations: async (node: ContactNode, { page }, context) => {
      const { account, run, services, loaders } = context
      const list = listCursors(context, conversationsScope(account.accountId))
      const limit = limitOf(page)
      const rows = page?.cursor
        ? await run(services.reads.conversations(account.accountId, { customerId: node.row.customerId }, await list.read(page, positionFrom), limit))
        : await loaders.conversationsOfContact(limit).load(node.row.customerId)
      return list.connection(rows, limit, (row) => [row.position, row.conversationId], conversationNode)
    }
  },
  Conversation: {
    id: (node: ConversationNode) => node.row.conversationId,
    status: (node: ConversationNode) => upper(node.row.status),
    updated_at: (node: ConversationNode) => iso(node.row.updatedAt),
    contact: async (node: ConversationNode, _, { loaders }) => contactNode((await loaders.contact.load(node.row.customerId))!),
    assignee: async (node: ConversationNode, _, { loaders }) => {
      if (node.row.assigneeAiAgentId !== null) return { kind: "AI", email: null, member_id: null, ai_agent_id: node.row.assigneeAiAgentId, name: null }
      if (node.row.assigneeUserId === null) return null
      const member = await loaders.member.load(node.row.assigneeUserId)
      return { kind: "MEMBER", email: member?.email ?? null, member_id: member?.memberId ?? null, ai_agent_id: null, name: null }
    },
    last_message: (node: ConversationNode) => (node.row.lastMessage === null ? null : lastMessageNode(node.row.conversationId, node.row.lastMessage)),
    messages: async (node: ConversationNode, { page }, context) => {
      const { account, run, services } = context
      const list = listCursors(context, messagesScope(account.accountId, node.row.conversationId))
      const limit = limitOf(page)
      const rows = await run(services.reads.messages(account.accountId, node.row.conversationId, await list.read(page, timeIdFrom), limit))
      return list.connection(rows, limit, (row) => [row.at, row.id], (row) => messageNode(node.row.conversationId, row))
    }
  },
  Message: {
    // A last message carries neither: its send's row does (outbound only).
    status: async (node: MessageNode, _, { loaders }) =>
      node.status !== undefined ? node.status : node.direction === "OUTBOUND" ? messageStatus((await loaders.send.load(node.id))?.status) : null,
    callback_data: async (node: MessageNode, _, { loaders }) =>
      node.callback_data !== undefined ? node.callback_data : node.direction === "OUTBOUND" ? (await loaders.send.load(node.id))?.callbackData ?? null : null,
    text: async (node: MessageNode, _, { loaders }) =>
      node.text !== undefined ? node.text : node.direction === "OUTBOUND" ? (await sentContent(node, loaders))?.text ?? null : null,
    content: async (node: MessageNode, _, { loaders }) => {
      if (node.content !== undefined) return node.content
      if (node.direction === "OUTBOUND") return (await sentContent(node, loaders))?.content ?? null
      return inboundContent(await loaders.inbound.load(node.id))
    }
  },
  Mutation: {
    sendText: async (_, { input }, { account, run, services }) => {
      const sent = await run(renameFields(services.messages.send(account, {
        fullPhoneNumber: input.to,
        type: "Text",
        data: { message: input.text },
        callbackData: input.callback_data ?? undefined
      }), { fullPhoneNumber: "input.to", "data.message": "input.text", callbackData: "input.callback_data" }))
      return { message_id: sent.id, status: "QUEUED" }
    },
    createContact: async (_, { input }, { account, run, services, loaders }) => {
      const existing = await run(Effect.flatMap(readE164(input.phone, "input.phone"), (phone) => services.customersRepo.findByPhone(account.accountId, phone)))
      if (existing !== undefined) return contactNode(existing)
      const tracked = await run(renameFields(services.customers.track(account, {
        fullPhoneNumber: input.phone,
        name: input.name ?? undefined,
        userId: input.user_id ?? undefined,
        tags: input.tags ?? undefined,
        traits: input.traits ?? undefined
      }), { fullPhoneNumber: "input.phone", name: "input.name", userId: "input.user_id", tags: "input.tags", traits: "input.traits" }))
      loaders.contact.clear(tracked.customerId)
      return contactNode((await loaders.contact.load(tracked.customerId))!)
    },
    addTags: async (_, { contactId, tags }, { account, run, services, loaders }) => {
      const contact = await loaders.contact.load(contactId)
      if (contact === undefined) return notFoundContact(contactId)
      await run(services.customers.track(account, { fullPhoneNumber: contact.phone, tags }))
      loaders.contact.clear(contactId)
      return contactNode((await loaders.contact.load(contactId))!)
    },
    removeTags: async (_, { contactId, tags }, { account, run, services, loaders }) => {
      const removed = await run(services.customersRepo.removeTags(account.accountId, contactId, tags))
      if (!removed) return notFoundContact(contactId)
      loaders.contact.clear(contactId)
      return contactNode((await loaders.contact.load(contactId))!)
    },
    assignConversation: async (_, { conversationId, agentEmail }, { account, run, services, loaders }) => {
      await run(services.conversations.assignById(account.accountId, conversationId, agentEmail))
      loaders.conversation.clear(conversationId)
      return conversationNode((await loaders.conversation.load(conversationId))!)
    },
    resolveConversation: async (_, { conversationId }, { account, run, services, loaders }) => {
      await run(services.conversations.resolve(account.accountId, conversationId))
      loaders.conversation.clear(conversationId)
      return conversationNode((await loaders.conversation.load(conversationId))!)
    }
  }
}

const notFoundContact = (id: string): never => {
  throw new NotFound({ message: `no contact ${id}` })
}
const notFoundConversation = (id: string): never => {
  throw new NotFound({ message: `no conversation ${id}` })
}
const notFoundBroadcast = (id: string): never => {
  throw new NotFound({ message: `no broadcast ${id}` })
}

