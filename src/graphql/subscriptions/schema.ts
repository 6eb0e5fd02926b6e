/** The Subscription root and its event types (docs/graphql.md, Subscriptions): added to schema.ts's SDL. */
export const SUBSCRIPTION_SDL = /* GraphQL */ `
type MessageStatusEvent {
  "Herald's id of the send (SendResult.message_id)."
  message_id: ID!
  status: MessageStatus!
  callback_data: String
  occurred_at: DateTime!
}

type Payment {
  id: ID!
  reference_id: String!
  amount: Float!
  currency: String!
  contact: Contact
  created_at: DateTime!
}

type Subscription {
  "Inbound WhatsApp messages as they arrive; of one conversation when conversationId is given."
  messageReceived(conversationId: ID): Message!
  "A WhatsApp send moved: sent, delivered, read or failed."
  messageStatusUpdated: MessageStatusEvent!
  "The broadcast's counters now, then as they change (a few times a second at most) and when it completes; the stream stays open for later delivery and read counts."
  broadcastProgress(broadcastId: ID!): Broadcast!
  "A payment captured from a customer."
  paymentReceived: Payment!
}
`
