import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AGENTS_LIMIT_MAX } from "../../aiAgents/AiAgents.ts"
import { InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { AppAuthentication, FeatureLockedResponse } from "./AppAuthentication.ts"

const Faq = Schema.Struct({ question: Schema.String, answer: Schema.String })

const AiAgent = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  instructions: Schema.String.annotations({ description: "kept for the team; no model runs in Herald" }),
  faq: Schema.Array(Faq),
  handoff_keywords: Schema.Array(Schema.String),
  active: Schema.Boolean,
  assignee: Schema.String.annotations({ description: "ai:<id>: the agentEmail that assigns a conversation to this agent" }),
  created_at: Schema.String,
  updated_at: Schema.String
})

const AgentFields = {
  instructions: Schema.optional(Schema.String),
  faq: Schema.optional(Schema.Array(Faq)).annotations({ description: "a customer's text containing a question (any case) gets its answer" }),
  handoff_keywords: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "a customer's text with one of these hands the conversation to a person" }),
  active: Schema.optional(Schema.Boolean)
}

const IdPath = Schema.Struct({ id: Schema.String })
const AgentAnswer = Schema.Struct({ success: Schema.Literal(true), ai_agent: AiAgent })

/** /api/v1/app/ai-agents (docs/app-api.md, AI agents): Advanced and Enterprise only. */
export class AiAgentsApi extends HttpApiGroup.make("appAiAgents")
  .add(
    HttpApiEndpoint.get("listAiAgents", "/ai-agents")
      .setUrlParams(Schema.Struct({
        limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, AGENTS_LIMIT_MAX))),
        cursor: Schema.optional(Schema.String)
      }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), ai_agents: Schema.Array(AiAgent), next_cursor: Schema.String }))
      .addError(InvalidRequestResponse)
      .addError(FeatureLockedResponse)
  )
  .add(
    HttpApiEndpoint.post("createAiAgent", "/ai-agents")
      .setPayload(Schema.Struct({ name: Schema.String, ...AgentFields }))
      .addSuccess(AgentAnswer)
      .addError(InvalidRequestResponse)
      .addError(FeatureLockedResponse)
      .annotate(OpenApi.Summary, "Define an AI agent (FAQ answers and handoff keywords)")
  )
  .add(HttpApiEndpoint.get("getAiAgent", "/ai-agents/:id").setPath(IdPath).addSuccess(AgentAnswer).addError(NotFoundResponse).addError(FeatureLockedResponse))
  .add(
    HttpApiEndpoint.patch("updateAiAgent", "/ai-agents/:id")
      .setPath(IdPath)
      .setPayload(Schema.Struct({ name: Schema.optional(Schema.String), ...AgentFields }))
      .addSuccess(AgentAnswer)
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .addError(FeatureLockedResponse)
  )
  .add(
    HttpApiEndpoint.del("deleteAiAgent", "/ai-agents/:id")
      .setPath(IdPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(NotFoundResponse)
      .addError(FeatureLockedResponse)
      .annotate(OpenApi.Summary, "Delete an AI agent (its conversations become unassigned)")
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app") {}
