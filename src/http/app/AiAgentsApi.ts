import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AGENTS_LIMIT_DEFAULT, AGENTS_LIMIT_MAX } from "../../aiAgents/AiAgents.ts"
import { InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { documented } from "../openApiAnnotations.ts"
import { AppAuthentication, FeatureLockedResponse } from "./AppAuthentication.ts"
import { CursorParam, limitParam, NextCursor } from "./ContactsApi.ts"

const Faq = Schema.Struct({
  question: Schema.String.annotations({
    description: "A question, 1 to 500 characters: a customer's text containing it (any case, runs of spaces as one) gets its answer; the longest " +
      "matching question wins."
  }),
  answer: Schema.String.annotations({ description: "The answer sent to the customer, 1 to 4,096 characters (a WhatsApp text)." })
}).annotations({ description: "A question the agent answers, with its answer." })

const AiAgent = Schema.Struct({
  id: Schema.String.annotations({ description: "The agent's id." }),
  name: Schema.String.annotations({ description: "The agent's name, for the team." }),
  instructions: Schema.String.annotations({
    description: "How the agent should behave, kept for the team (and a model you run outside Herald); no model runs in Herald."
  }),
  faq: Schema.Array(Faq).annotations({ description: "The questions the agent answers." }),
  handoff_keywords: Schema.Array(Schema.String).annotations({
    description: "Words or phrases that hand the conversation to a person when a customer's text contains one (any case, as a whole word or phrase)."
  }),
  active: Schema.Boolean.annotations({
    description: "Whether the agent acts: an inactive agent answers nothing and hands off nothing (its conversations stay assigned to it)."
  }),
  assignee: Schema.String.annotations({
    description: "ai:<id>: the agentEmail that assigns a conversation to this agent (POST /api/v1/public/chats/assign, GraphQL's assignConversation)."
  }),
  created_at: Schema.String.annotations({ description: "When the agent was created (ISO 8601, UTC)." }),
  updated_at: Schema.String.annotations({ description: "When the agent was last changed (ISO 8601, UTC)." })
}).annotations({ description: "An AI agent: answers customers from its FAQ and hands the conversation to a person when it cannot." })

const AgentFields = {
  instructions: Schema.optional(Schema.String).annotations({
    description: "How the agent should behave, at most 4,000 characters, kept for the team (no model runs in Herald). Absent: empty (create) or unchanged (change)."
  }),
  faq: Schema.optional(Schema.Array(Faq)).annotations({
    description: "The questions and answers, at most 100: a customer's text containing a question (any case) gets its answer. Given, they replace " +
      "the agent's; absent: none (create) or unchanged (change)."
  }),
  handoff_keywords: Schema.optional(Schema.Array(Schema.String)).annotations({
    description: "Words or phrases (1 to 100 characters, at most 50) that hand the conversation to a person when a customer's text contains one " +
      "(any case, as a whole word). Given, they replace the agent's; absent: none (create) or unchanged (change)."
  }),
  active: Schema.optional(Schema.Boolean).annotations({ description: "Whether the agent acts on its conversations. Absent: true (create) or unchanged (change)." })
}

const AgentPath = Schema.Struct({ id: Schema.String.annotations({ description: "The agent's id." }) })
const AgentAnswer = Schema.Struct({ success: Schema.Literal(true), ai_agent: AiAgent })

const AGENT = {
  id: "4d5e6f70-8192-4a3b-8c4d-5e6f708192a3",
  name: "Front desk",
  instructions: "Be brief.",
  faq: [{ question: "opening hours", answer: "We are open 9 to 6, Monday to Saturday." }],
  handoff_keywords: ["human", "agent", "complaint"],
  active: true,
  assignee: "ai:4d5e6f70-8192-4a3b-8c4d-5e6f708192a3",
  created_at: "2026-02-20T11:00:00.000Z",
  updated_at: "2026-02-20T11:00:00.000Z"
}
const NEW_FAQ = [
  { question: "opening hours", answer: "We are open 9 to 7, Monday to Saturday." },
  { question: "delivery", answer: "We deliver across Pune in 2 days." }
]
const WHO = "A secret key, on the Advanced and Enterprise plans (Growth: 403 `feature_locked`)."

/** /api/v1/app/ai-agents (docs/app-api.md, AI agents): Advanced and Enterprise only. */
export class AiAgentsApi extends HttpApiGroup.make("appAiAgents")
  .add(
    HttpApiEndpoint.get("listAiAgents", "/ai-agents")
      .setUrlParams(Schema.Struct({ limit: limitParam(AGENTS_LIMIT_MAX, AGENTS_LIMIT_DEFAULT), cursor: CursorParam }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        ai_agents: Schema.Array(AiAgent).annotations({ description: "The agents on this page, newest first." }),
        next_cursor: NextCursor
      }))
      .addError(InvalidRequestResponse)
      .addError(FeatureLockedResponse)
      .annotateContext(documented({
        summary: "List the AI agents",
        description: `The account's AI agents, newest first, by cursor. ${WHO}`,
        response: { success: true, ai_agents: [AGENT], next_cursor: "" },
        returns: "A page of agents."
      }))
  )
  .add(
    HttpApiEndpoint.post("createAiAgent", "/ai-agents")
      .setPayload(Schema.Struct({ name: Schema.String.annotations({ description: "The agent's name, 1 to 100 characters after trimming." }), ...AgentFields }))
      .addSuccess(AgentAnswer)
      .addError(InvalidRequestResponse)
      .addError(FeatureLockedResponse)
      .annotateContext(documented({
        summary: "Define an AI agent (FAQ answers and handoff keywords)",
        description: "No language model runs in Herald: for each message of a customer whose conversation is assigned to the agent (its `assignee`), " +
          "a text containing a handoff keyword hands the conversation to a person; else a text containing one of its questions gets that answer; " +
          "anything else hands off. A handoff unassigns the conversation and emits `conversation.handoff` to the developer webhook. Bad input is " +
          `400 naming every problem. ${WHO}`,
        request: {
          name: "Front desk",
          instructions: "Be brief.",
          active: true,
          faq: [{ question: "opening hours", answer: "We are open 9 to 6, Monday to Saturday." }],
          handoff_keywords: ["human", "agent", "complaint"]
        },
        response: { success: true, ai_agent: AGENT },
        returns: "The new agent."
      }))
  )
  .add(
    HttpApiEndpoint.get("getAiAgent", "/ai-agents/:id")
      .setPath(AgentPath)
      .addSuccess(AgentAnswer)
      .addError(NotFoundResponse)
      .addError(FeatureLockedResponse)
      .annotateContext(documented({
        summary: "Read an AI agent",
        description: `One agent. Another account's id, or one that is not an id, is 404. ${WHO}`,
        response: { success: true, ai_agent: AGENT },
        returns: "The agent."
      }))
  )
  .add(
    HttpApiEndpoint.patch("updateAiAgent", "/ai-agents/:id")
      .setPath(AgentPath)
      .setPayload(Schema.Struct({
        name: Schema.optional(Schema.String).annotations({ description: "A new name, 1 to 100 characters after trimming." }),
        ...AgentFields
      }))
      .addSuccess(AgentAnswer)
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .addError(FeatureLockedResponse)
      .annotateContext(documented({
        summary: "Change an AI agent",
        description: "Only the fields given change; `faq` and `handoff_keywords` replace the agent's lists. Setting `active: false` stops the agent " +
          `answering and handing off; its conversations stay assigned to it. ${WHO}`,
        request: { faq: NEW_FAQ },
        response: {
          success: true,
          ai_agent: {
            ...AGENT,
            faq: NEW_FAQ,
            updated_at: "2026-03-01T09:30:00.000Z"
          }
        },
        returns: "The agent as it is now."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteAiAgent", "/ai-agents/:id")
      .setPath(AgentPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(NotFoundResponse)
      .addError(FeatureLockedResponse)
      .annotateContext(documented({
        summary: "Delete an AI agent (its conversations become unassigned)",
        description: `Deletes the agent; the conversations assigned to it become unassigned, for a person to pick up. ${WHO}`,
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app")
  .annotate(OpenApi.Description, "AI agents: answer customers' WhatsApp messages from a list of questions and answers and hand the conversation to a " +
    "person when they cannot; no language model runs in Herald (docs/app-api.md, AI agents). Advanced and Enterprise plans.") {}
