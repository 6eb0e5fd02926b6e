import type { AiAgent } from "../../aiAgents/AiAgentsRepo.ts"

/** An AI agent as /api/v1/app/ai-agents answers it. */
export const presentAiAgent = (row: AiAgent) => ({
  id: row.agentId,
  name: row.name,
  instructions: row.instructions,
  faq: row.faq,
  handoff_keywords: row.handoffKeywords,
  active: row.active,
  // How a conversation names it as its assignee (chats/assign, assignConversation).
  assignee: `ai:${row.agentId}`,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString()
})
