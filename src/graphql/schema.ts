/**
 * Herald's GraphQL schema (docs/graphql.md), written once as SDL; resolvers are attached by name
 * (resolvers.ts). Status-like fields are UPPER_CASE enums; ids are the REST ids; lists are
 * connections paged newest first by opaque cursors.
 */
export const SDL = /* GraphQL */ `
"ISO 8601 date-time, UTC."
scalar DateTime
"Any JSON value (traits, template components)."
scalar JSON

enum Plan { STARTER GROWTH ADVANCED ENTERPRISE }
enum TransactionKind { CREDIT CHARGE REFUND }
enum ConversationStatus { OPEN RESOLVED }
enum Direction { INBOUND OUTBOUND }
enum MessageStatus { QUEUED SENT DELIVERED READ FAILED }
enum TemplateStatus { PENDING APPROVED REJECTED }
enum TemplateCategory { MARKETING UTILITY AUTHENTICATION }
enum TraitOp { EQ NEQ CONTAINS GT GTE LT LTE EXISTS NOT_EXISTS IN }
enum AgentKind { MEMBER AI }
enum BroadcastStatus { SCHEDULED QUEUED RUNNING COMPLETED CANCELLED }
"COMPLETED: answered; REJECTED: declined; MISSED: any other end (not answered, failed, or a status Meta may add)."
enum CallStatus { COMPLETED MISSED REJECTED }

input PageInput {
  "1 to 100; 20 when absent."
  limit: Int
  cursor: String
}

type PageInfo { hasNextPage: Boolean! endCursor: String }

type Wallet { balance: Float! currency: String! }

type Me {
  account_id: ID!
  label: String!
  plan: Plan!
  rate_limit_per_minute: Int
  wallet: Wallet!
}

type WalletTransaction {
  id: ID!
  kind: TransactionKind!
  "Signed: credits and refunds positive, charges negative."
  amount: Float!
  balance_after: Float
  reference: String
  created_at: DateTime!
}
type WalletTransactionEdge { cursor: String! node: WalletTransaction! }
type WalletTransactionConnection { edges: [WalletTransactionEdge!]! pageInfo: PageInfo! }

input TraitFilter {
  trait: String!
  op: TraitOp!
  "A string, number or boolean; a list for IN; none for EXISTS and NOT_EXISTS."
  value: JSON
}
input ContactFilter {
  "Part of the name or phone."
  search: String
  "Every tag must be present."
  tags: [String!]
  traits: [TraitFilter!]
}

"A customer, with the fields and names every surface answers (docs/customers.md), and its conversations."
type Contact {
  "The customer's id."
  id: ID!
  "The same id: the contract names it."
  contact_id: ID!
  name: String
  "E.164."
  phone: String!
  "Your own id for the customer (userId on track/users); null when none was given."
  user_id: String
  tags: [String!]!
  traits: JSON!
  created_at: DateTime!
  "When the customer last wrote to one of the account's WhatsApp numbers; null if they never did."
  last_seen_at: DateTime
  conversations(page: PageInput): ConversationConnection!
}
type ContactEdge { cursor: String! node: Contact! }
type ContactConnection { edges: [ContactEdge!]! pageInfo: PageInfo! }

type Agent {
  kind: AgentKind!
  email: String
  "A MEMBER's member_id, as the team list shows it (null for the account's owner, whose member_id the list leaves empty)."
  member_id: ID
  ai_agent_id: ID
  name: String
}

type Message {
  id: ID!
  conversation_id: ID!
  direction: Direction!
  "The public API's type name (Text, Image, InteractiveButton, Template, ...; inbound also InteractiveButtonReply, Location, ...)."
  type: String!
  "What the person reads: a text's body, a media caption, an interactive message's body, a reply's title, a template's body with its values; null for a message without text (audio, a sticker, a location)."
  text: String
  "The message as WhatsApp carries it, in Meta's Cloud API shape {type, <type>: {...}}: what was sent to Meta (outbound), what Meta delivered without its envelope (inbound)."
  content: JSON
  "Outbound messages only."
  status: MessageStatus
  callback_data: String
  created_at: DateTime!
}
type MessageEdge { cursor: String! node: Message! }
type MessageConnection { edges: [MessageEdge!]! pageInfo: PageInfo! }

type Conversation {
  id: ID!
  contact: Contact!
  status: ConversationStatus!
  assignee: Agent
  last_message: Message
  updated_at: DateTime!
  messages(page: PageInput): MessageConnection!
}
type ConversationEdge { cursor: String! node: Conversation! }
type ConversationConnection { edges: [ConversationEdge!]! pageInfo: PageInfo! }

input ConversationFilter {
  status: ConversationStatus
  assignee_email: String
  "Only conversations nobody is assigned to."
  unassigned: Boolean
}

type Template {
  id: ID!
  name: String!
  language: String!
  category: TemplateCategory!
  status: TemplateStatus!
  rejected_reason: String
  components: JSON!
  created_at: DateTime!
}
type TemplateEdge { cursor: String! node: Template! }
type TemplateConnection { edges: [TemplateEdge!]! pageInfo: PageInfo! }

"An RCS broadcast (REST's /api/v1/rcs/broadcasts), of any bot of the account."
type Broadcast {
  id: ID!
  name: String!
  status: BroadcastStatus!
  "Contacts of the list when the broadcast started (0 before)."
  total_count: Int!
  "Taken by the gateway (later delivered or read included)."
  sent_count: Int!
  "Delivered (read included)."
  delivered_count: Int!
  read_count: Int!
  "Failed sends (cancelled targets not included: see by_status)."
  failed_count: Int!
  created_at: DateTime!
}
type BroadcastEdge { cursor: String! node: Broadcast! }
type BroadcastConnection { edges: [BroadcastEdge!]! pageInfo: PageInfo! }

input BroadcastFilter {
  status: BroadcastStatus
  bot_id: ID
}

type StatusCount { status: MessageStatus! count: Int! }

type BroadcastTarget {
  "E.164."
  phone: String!
  "QUEUED until the gateway takes it (or while its send is unconfirmed); a cancelled target is FAILED."
  status: MessageStatus!
  "Why it failed (the gateway's error); the word cancelled for a target the broadcast's cancellation stopped."
  failure_reason: String
  message_id: ID!
}
type BroadcastTargetEdge { cursor: String! node: BroadcastTarget! }
type BroadcastTargetConnection { edges: [BroadcastTargetEdge!]! pageInfo: PageInfo! }

type BroadcastReport {
  broadcast: Broadcast!
  "Every MessageStatus once, counting each recipient under its current status (from the counters); the counts add up to total_count."
  by_status: [StatusCount!]!
  "Newest first (the last recipient of the list first)."
  targets(page: PageInput, status: MessageStatus): BroadcastTargetConnection!
}

"A WhatsApp call (Meta's Calling API) on one of the account's numbers."
type Call {
  "Meta's call id."
  id: ID!
  conversation: Conversation
  direction: Direction!
  status: CallStatus!
  duration_sec: Int!
  recording_url: String
  "When the call began: its end, as Meta reported it, less its duration."
  started_at: DateTime!
}
type CallEdge { cursor: String! node: Call! }
type CallConnection { edges: [CallEdge!]! pageInfo: PageInfo! }

input CallFilter {
  status: CallStatus
  direction: Direction
}

type Query {
  me: Me!
  wallet: Wallet!
  walletTransactions(page: PageInput): WalletTransactionConnection!
  contact(id: ID!): Contact
  contacts(filter: ContactFilter, page: PageInput): ContactConnection!
  conversation(id: ID!): Conversation
  conversations(filter: ConversationFilter, page: PageInput): ConversationConnection!
  messages(conversationId: ID!, page: PageInput): MessageConnection!
  template(id: ID!): Template
  templates(status: TemplateStatus, category: TemplateCategory, page: PageInput): TemplateConnection!
  broadcast(id: ID!): Broadcast
  broadcasts(filter: BroadcastFilter, page: PageInput): BroadcastConnection!
  broadcastReport(id: ID!): BroadcastReport
  call(id: ID!): Call
  "Newest first (by when the call ended)."
  calls(filter: CallFilter, page: PageInput): CallConnection!
}

input SendTextInput {
  "Digits with the country code; '+' optional."
  to: String!
  text: String!
  callback_data: String
}
type SendResult { message_id: ID! status: MessageStatus! }

input CreateContactInput {
  phone: String!
  name: String
  "Your own id for the customer, 1 to 256 characters."
  user_id: String
  tags: [String!]
  traits: JSON
}
type Mutation {
  "A WhatsApp Text through the public API's path: the 24-hour window, the plan, the queue."
  sendText(input: SendTextInput!): SendResult!
  "Idempotent: the existing contact, unchanged, when the phone is already saved."
  createContact(input: CreateContactInput!): Contact!
  "Appends the tags, without duplicates."
  addTags(contactId: ID!, tags: [String!]!): Contact!
  "Removes the given tags."
  removeTags(contactId: ID!, tags: [String!]!): Contact!
  "To the team member with that e-mail; an empty agentEmail unassigns."
  assignConversation(conversationId: ID!, agentEmail: String!): Conversation!
  resolveConversation(conversationId: ID!): Conversation!
}
`
