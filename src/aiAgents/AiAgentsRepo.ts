import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PagePosition } from "../storage/pageCursor.ts"
import { positionOf } from "../storage/pageCursor.ts"
import type { AgentDefinition, FaqEntry } from "./agentRules.ts"

/** An AI agent of an account (`position`: its place in the account's list, newest first). */
export interface AiAgent {
  readonly agentId: string
  readonly name: string
  readonly instructions: string
  readonly faq: ReadonlyArray<FaqEntry>
  readonly handoffKeywords: ReadonlyArray<string>
  readonly active: boolean
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly position: string
}

const COLUMNS = `agent_id::text, name, instructions, faq, handoff_keywords, active, created_at, updated_at, ${positionOf("created_at")} AS position`

/** `ai_agents`: the one writer, and the reads of agents (by id, a page, the one answering a conversation). */
export class AiAgentsRepo extends Effect.Service<AiAgentsRepo>()("herald/aiAgents/AiAgentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)

    /** An agent of the account (`agentId` a uuid). */
    const find = Effect.fn("AiAgentsRepo.find")(function*(accountId: string, agentId: string) {
      const [row] = yield* sql<AiAgent>`SELECT ${columns} FROM ai_agents WHERE account_id = ${accountId} AND agent_id = ${agentId}`
      return row
    }, Effect.orDie)

    const insert = Effect.fn("AiAgentsRepo.insert")(function*(accountId: string, agent: AgentDefinition) {
      const [row] = yield* sql<AiAgent>`
        INSERT INTO ai_agents (account_id, name, instructions, faq, handoff_keywords, active)
        VALUES (${accountId}, ${agent.name}, ${agent.instructions}, ${JSON.stringify(agent.faq)}::jsonb, ${agent.handoffKeywords}::text[], ${agent.active})
        RETURNING ${columns}`
      return row!
    }, Effect.orDie)

    /** Undefined when the agent is gone. */
    const update = Effect.fn("AiAgentsRepo.update")(function*(accountId: string, agentId: string, agent: AgentDefinition) {
      const [row] = yield* sql<AiAgent>`
        UPDATE ai_agents SET name = ${agent.name}, instructions = ${agent.instructions}, faq = ${JSON.stringify(agent.faq)}::jsonb,
          handoff_keywords = ${agent.handoffKeywords}::text[], active = ${agent.active}, updated_at = now()
        WHERE account_id = ${accountId} AND agent_id = ${agentId}
        RETURNING ${columns}`
      return row
    }, Effect.orDie)

    /** Deleting an agent unassigns its conversations (the foreign key sets them to nobody). False when there was none. */
    const remove = Effect.fn("AiAgentsRepo.remove")(function*(accountId: string, agentId: string) {
      const deleted = yield* sql`DELETE FROM ai_agents WHERE account_id = ${accountId} AND agent_id = ${agentId} RETURNING 1`
      return deleted.length > 0
    }, Effect.orDie)

    /** Up to `limit` agents of the account after `after`, newest first. */
    const page = Effect.fn("AiAgentsRepo.page")((accountId: string, after: PagePosition | undefined, limit: number) =>
      sql<AiAgent>`
        SELECT ${columns} FROM ai_agents WHERE account_id = ${accountId}
          ${after === undefined ? sql`` : sql`AND (created_at, agent_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`}
        ORDER BY created_at DESC, agent_id DESC LIMIT ${limit}`.pipe(Effect.orDie))

    /** The active agent a conversation is assigned to (the conversation's row is locked by the inbound's upsert). */
    const activeOfConversation = Effect.fn("AiAgentsRepo.activeOfConversation")(function*(conversationId: string) {
      const [agent] = yield* sql<{ agentId: string; faq: ReadonlyArray<FaqEntry>; handoffKeywords: ReadonlyArray<string> }>`
        SELECT a.agent_id::text, a.faq, a.handoff_keywords
        FROM conversations v JOIN ai_agents a ON a.agent_id = v.assignee_ai_agent_id
        WHERE v.conversation_id = ${conversationId}::uuid AND a.active`
      return agent
    }, Effect.orDie)

    return { find, insert, update, remove, page, activeOfConversation } as const
  })
}) {}
