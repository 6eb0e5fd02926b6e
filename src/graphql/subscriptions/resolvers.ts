import type { BroadcastRow } from "../../broadcasts/BroadcastsRepo.ts"
import { NotFound } from "../../domain/errors.ts"
import type { BroadcastProgressEvent, MessageReceivedEvent, MessageStatusEvent, PaymentReceivedEvent } from "../../live/liveSubjects.ts"
import { isLaterProgress, progressStateOf } from "../../live/progressOrder.ts"
import { graphqlError } from "../errors.ts"
import type { GraphqlContext } from "../context.ts"
import { broadcastNode } from "../nodes.ts"
import type { OpenFeed } from "./LiveFeed.ts"


const openOf = (context: GraphqlContext): OpenFeed => {
  if (context.openFeed === undefined) throw graphqlError("VALIDATION_ERROR", "subscriptions are served over the WebSocket (graphql-ws) on /api/v1/graphql")
  return context.openFeed
}

const withCounters = (row: BroadcastRow, event: BroadcastProgressEvent): BroadcastRow => ({
  ...row,
  status: event.status as BroadcastRow["status"],
  totalCount: event.total_count,
  sentCount: event.sent_count,
  deliveredCount: event.delivered_count,
  readCount: event.read_count,
  failedCount: event.failed_count,
  cancelledCount: event.cancelled_count
})

/** Whether an event shows a later state of the broadcast than a row read about the same time (src/live/progressOrder.ts). */
const isLater = (event: BroadcastProgressEvent, row: BroadcastRow) =>
  isLaterProgress(progressStateOf(event), {
    status: row.status,
    accounted: row.sentCount + row.deliveredCount + row.readCount + row.failedCount + row.cancelledCount
  })

type Args = Record<string, any>

interface SubscriptionField {
  readonly subscribe: (parent: unknown, args: Args, context: GraphqlContext) => Promise<AsyncIterable<unknown>>
  readonly resolve: (event: any) => unknown
}

/** Subscription root fields: `subscribe` opens the feed, `resolve` shapes each event. */
export const subscriptionResolvers: Record<string, SubscriptionField> = {
  messageReceived: {
    subscribe: async (_, { conversationId }, context) => {
      const open = openOf(context)
      if (conversationId != null && (await context.loaders.conversation.load(conversationId)) === undefined) {
        throw new NotFound({ message: `no conversation ${conversationId}` })
      }
      return open({
        coalesce: false,
        accept: (kind, event: MessageReceivedEvent) =>
          kind === "message_received" && (conversationId == null || event.conversation_id === conversationId) ? event : undefined
      })
    },
    resolve: (event: MessageReceivedEvent) => ({
      id: event.id,
      conversation_id: event.conversation_id,
      direction: "INBOUND",
      type: event.type,
      text: event.text,
      status: null,
      callback_data: null,
      created_at: event.received_at
    })
  },
  messageStatusUpdated: {
    subscribe: (_, __, context) =>
      openOf(context)({ coalesce: false, accept: (kind, event: MessageStatusEvent) => (kind === "message_status" ? event : undefined) }),
    resolve: (event: MessageStatusEvent) => ({ ...event, status: event.status.toUpperCase() })
  },
  broadcastProgress: {
    subscribe: async (_, { broadcastId }, context) => {
      const open = openOf(context)
      // The row is read once the feed listens: the first event is the counters as they are now.
      // An event arriving during that read is kept and applied if it is the later of the two, so
      // nothing published after the feed listened is lost (the final counts least of all).
      let row: BroadcastRow | undefined
      let early: BroadcastProgressEvent | undefined
      const feed = await open({
        coalesce: true,
        accept: (kind, event: BroadcastProgressEvent) => {
          if (kind !== "broadcast_progress" || event.broadcast_id !== broadcastId) return undefined
          if (row === undefined) return void (early = event)
          // Two nodes publish a broadcast's progress (the worker sending it, the API node applying
          // its delivery reports), so an older snapshot can arrive after a newer one: it is dropped.
          if (!isLater(event, row)) return undefined
          return (row = withCounters(row, event))
        }
      })
      const read = await context.run(context.services.reads.broadcast(context.account.accountId, broadcastId))
      if (read === undefined) {
        await feed.return()
        throw new NotFound({ message: `no broadcast ${broadcastId}` })
      }
      row = early !== undefined && isLater(early, read) ? withCounters(read, early) : read
      feed.push(row)
      return feed
    },
    resolve: (row: BroadcastRow) => broadcastNode(row)
  },
  paymentReceived: {
    subscribe: (_, __, context) =>
      openOf(context)({ coalesce: false, accept: (kind, event: PaymentReceivedEvent) => (kind === "payment_received" ? event : undefined) }),
    resolve: (event: PaymentReceivedEvent) => event
  }
}

/** Payment's contact, read when the event is delivered (a subscription's context outlives its loaders' freshness). */
export const paymentResolvers = {
  contact: async (event: PaymentReceivedEvent, _: Args, context: GraphqlContext) => {
    context.loaders.contact.clear(event.customer_id)
    const row = await context.loaders.contact.load(event.customer_id)
    return row === undefined ? null : { __kind: "Contact" as const, row }
  }
}
