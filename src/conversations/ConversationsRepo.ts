import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"

/** A conversation with its customer and assignee (a member's e-mail, or `ai:<id>` for an AI agent). */
export interface Conversation {
  readonly conversationId: string
  readonly phoneNumberId: string
  readonly status: "open" | "resolved"
  readonly assigneeEmail: string | null
  readonly lastMessage: unknown
  readonly updatedAt: Date
  readonly customerId: string
  readonly customerPhone: string
  readonly customerName: string | null
}

/** A conversation's assignee: a member, an AI agent, or nobody. */
export interface Assignee {
  readonly user: string | null
  readonly ai: string | null
}

/** What conversations.last_message holds: the latest message either way. */
export interface LastMessage {
  readonly direction: "inbound" | "outbound"
  readonly id: string
  readonly type: string
  readonly text: string | null
  /** ISO 8601. */
  readonly at: string
}

/**
 * `conversations`: the one writer. A conversation is one per (WhatsApp number, customer), opened
 * and reopened by the customer's messages (`onContact`, in the inbound's transaction), its last
 * message kept by sends too (`recordOutbound`, in the sender actor's commit), assigned and resolved
 * by the team, handed off by an AI agent.
 */
export class ConversationsRepo extends Effect.Service<ConversationsRepo>()("herald/conversations/ConversationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const read = (where: Fragment) =>
      sql<Conversation>`
        SELECT v.conversation_id::text, v.phone_number_id, v.status,
               coalesce(u.email, 'ai:' || v.assignee_ai_agent_id::text) AS assignee_email, v.last_message, v.updated_at,
               c.customer_id::text, v.customer_phone, c.name AS customer_name
        FROM conversations v JOIN customers c ON c.customer_id = v.customer_id LEFT JOIN users u ON u.user_id = v.assignee_user_id
        WHERE ${where}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    const find = Effect.fn("ConversationsRepo.find")((conversationId: string) => read(sql`v.conversation_id = ${conversationId}`))

    const findOfAccount = Effect.fn("ConversationsRepo.findOfAccount")((accountId: string, conversationId: string) =>
      read(sql`v.conversation_id = ${conversationId} AND v.account_id = ${accountId}`))

    /** The open conversation with a customer: on the given number, else the most recently active one. */
    const openWith = Effect.fn("ConversationsRepo.openWith")(function*(accountId: string, phone: string, phoneNumberId: string | undefined) {
      const [row] = yield* sql<{ conversationId: string }>`
        SELECT conversation_id::text FROM conversations
        WHERE account_id = ${accountId} AND customer_phone = ${phone} AND status = 'open'
          ${phoneNumberId === undefined ? sql`` : sql`AND phone_number_id = ${phoneNumberId}`}
        ORDER BY updated_at DESC LIMIT 1`
      return row?.conversationId
    }, Effect.orDie)

    /** A member of the account by e-mail (any role: whoever answers chats; not a person still invited). */
    const memberByEmail = Effect.fn("ConversationsRepo.memberByEmail")(function*(accountId: string, email: string) {
      const [agent] = yield* sql<{ userId: string }>`
        SELECT u.user_id::text FROM memberships m JOIN users u ON u.user_id = m.user_id
        WHERE m.account_id = ${accountId} AND m.status = 'active' AND lower(u.email) = ${email.trim().toLowerCase()}`
      return agent?.userId
    }, Effect.orDie)

    /** An AI agent of the account by id, active or not (`agentId` a uuid). */
    const aiAgentOf = Effect.fn("ConversationsRepo.aiAgentOf")(function*(accountId: string, agentId: string) {
      const [agent] = yield* sql<{ agentId: string }>`SELECT agent_id::text FROM ai_agents WHERE account_id = ${accountId} AND agent_id = ${agentId}`
      return agent?.agentId
    }, Effect.orDie)

    const setAssignee = Effect.fn("ConversationsRepo.setAssignee")((conversationId: string, agent: Assignee) =>
      sql`
        UPDATE conversations SET assignee_user_id = ${agent.user}, assignee_ai_agent_id = ${agent.ai}, updated_at = now()
        WHERE conversation_id = ${conversationId}`.pipe(Effect.asVoid, Effect.orDie))

    const resolve = Effect.fn("ConversationsRepo.resolve")((conversationId: string) =>
      sql`UPDATE conversations SET status = 'resolved', updated_at = now() WHERE conversation_id = ${conversationId} AND status = 'open'`.pipe(
        Effect.asVoid,
        Effect.orDie
      ))

    /** When the customer last wrote to the number (the 24-hour window), null if never. */
    const lastInboundAt = Effect.fn("ConversationsRepo.lastInboundAt")((phoneNumberId: string, phone: string) =>
      Effect.map(
        sql<{ lastInboundAt: Date | null }>`
          SELECT last_inbound_at FROM conversations WHERE phone_number_id = ${phoneNumberId} AND customer_phone = ${phone}`,
        (rows) => rows[0]?.lastInboundAt ?? null
      ).pipe(Effect.orDie))

    /** An AI agent hands the conversation to the team: nobody is assigned. */
    const handOff = Effect.fn("ConversationsRepo.handOff")((conversationId: string) =>
      sql`UPDATE conversations SET assignee_ai_agent_id = NULL, updated_at = now() WHERE conversation_id = ${conversationId}::uuid`.pipe(
        Effect.asVoid,
        Effect.orDie
      ))

    /**
     * The conversation of a customer who wrote, called or paid, created on first contact (in the
     * caller's transaction, which the upsert's row lock orders).
     */
    const onContact = Effect.fn("ConversationsRepo.onContact")(function*(contact: {
      readonly accountId: string
      readonly phoneNumberId: string
      readonly customerId: string
      readonly phone: string
      readonly inboundAt: Date | undefined
      readonly lastMessage: LastMessage | undefined
    }) {
      const inbound = contact.inboundAt === undefined ? null : contact.inboundAt.toISOString()
      const [conversation] = yield* sql<{ conversationId: string }>`
        INSERT INTO conversations (account_id, phone_number_id, customer_id, customer_phone, last_inbound_at, last_message)
        VALUES (${contact.accountId}::uuid, ${contact.phoneNumberId}, ${contact.customerId}::uuid, ${contact.phone}, ${inbound}::timestamptz,
                ${contact.lastMessage === undefined ? null : JSON.stringify(contact.lastMessage)}::jsonb)
        ON CONFLICT (phone_number_id, customer_phone) DO UPDATE SET
          -- A customer who writes reopens a resolved conversation (and opens the 24-hour window).
          status = CASE WHEN excluded.last_inbound_at IS NULL THEN conversations.status ELSE 'open' END,
          last_inbound_at = greatest(conversations.last_inbound_at, excluded.last_inbound_at),
          -- The later of this message and the one recorded (a send's, or an inbound Meta retried
          -- late). Meta's timestamps are whole seconds: within the recorded one's second, this
          -- one came later (its webhook follows).
          last_message = CASE WHEN excluded.last_message IS NOT NULL
              AND excluded.last_inbound_at >= date_trunc('second', coalesce((conversations.last_message ->> 'at')::timestamptz, '-infinity'))
            THEN excluded.last_message ELSE conversations.last_message END,
          updated_at = now()
        RETURNING conversation_id::text`
      return conversation!.conversationId
    }, Effect.orDie)

    /**
     * A send is its conversation's last message (if the customer ever wrote: a conversation exists),
     * unless a later one is already recorded (Meta's timestamps of inbound messages can be ahead).
     * A statement of the sender actor's commit.
     */
    const recordOutbound = (phoneNumberId: string, phone: string, message: LastMessage): Effect.Effect<void, SqlError> =>
      Effect.asVoid(sql`
        UPDATE conversations SET last_message = ${JSON.stringify(message)}::jsonb, updated_at = now()
        WHERE phone_number_id = ${phoneNumberId} AND customer_phone = ${phone}
          AND coalesce((last_message ->> 'at')::timestamptz, '-infinity') <= ${message.at}::timestamptz`).pipe(
        Effect.withSpan("ConversationsRepo.recordOutbound")
      )

    return { find, findOfAccount, openWith, memberByEmail, aiAgentOf, setAssignee, resolve, lastInboundAt, handOff, onContact, recordOutbound } as const
  })
}) {}
