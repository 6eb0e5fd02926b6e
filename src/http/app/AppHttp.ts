import { Effect, Layer } from "effect"
import { AiAgents } from "../../aiAgents/AiAgents.ts"
import type { AiAgent } from "../../aiAgents/AiAgentsRepo.ts"
import { presentPage } from "../page.ts"
import { presentAiAgent } from "./presentAiAgent.ts"
import { AppContacts } from "../../customers/AppContacts.ts"
import { Segments } from "../../segments/Segments.ts"
import { PublicMessages } from "../../whatsapp/PublicMessages.ts"
import { renameFields } from "../../domain/errors.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentAccount } from "./AppAuthentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

const ContactsHttpLive = apiGroup(HeraldApi, "appContacts", (handlers) =>
  Effect.map(AppContacts, (contacts) =>
    handlers
      .handle("listContacts", ({ urlParams }) => Effect.flatMap(CurrentAccount, (account) => contacts.list(account, urlParams)))
      .handle("createContact", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => contacts.create(account, payload)))
      .handle("getContact", ({ path }) => Effect.flatMap(CurrentAccount, (account) => contacts.get(account, path.id)))
      .handle("updateContact", ({ path, payload }) => Effect.flatMap(CurrentAccount, (account) => contacts.update(account, path.id, payload)))
      .handle("deleteContact", ({ path }) => Effect.flatMap(CurrentAccount, (account) => contacts.remove(account, path.id)))))

const SegmentsHttpLive = apiGroup(HeraldApi, "appSegments", (handlers) =>
  Effect.map(Segments, (segments) =>
    handlers
      .handle("listSegments", ({ urlParams }) => Effect.flatMap(CurrentAccount, (account) => segments.list(account, urlParams)))
      .handle("createSegment", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => segments.create(account, payload)))
      .handle("getSegment", ({ path }) => Effect.flatMap(CurrentAccount, (account) => segments.get(account, path.id)))
      .handle("updateSegment", ({ path, payload }) => Effect.flatMap(CurrentAccount, (account) => segments.update(account, path.id, payload)))
      .handle("deleteSegment", ({ path }) => Effect.flatMap(CurrentAccount, (account) => segments.remove(account, path.id)))
      .handle("segmentContacts", ({ path, urlParams }) => Effect.flatMap(CurrentAccount, (account) => segments.members(account, path.id, urlParams)))))

/** An AI agent as /api/v1/app/ai-agents answers it. */
const aiAgentAnswer = <E, R>(agent: Effect.Effect<AiAgent, E, R>) => Effect.map(agent, (row) => ({ success: true as const, ai_agent: presentAiAgent(row) }))

const AiAgentsHttpLive = apiGroup(HeraldApi, "appAiAgents", (handlers) =>
  Effect.map(AiAgents, (agents) =>
    handlers
      .handle("listAiAgents", ({ urlParams }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(agents.list(account, urlParams), (page) => presentPage("ai_agents", page, presentAiAgent))))
      .handle("createAiAgent", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => aiAgentAnswer(agents.create(account, payload))))
      .handle("getAiAgent", ({ path }) => Effect.flatMap(CurrentAccount, (account) => aiAgentAnswer(agents.get(account, path.id))))
      .handle("updateAiAgent", ({ path, payload }) => Effect.flatMap(CurrentAccount, (account) => aiAgentAnswer(agents.update(account, path.id, payload))))
      .handle("deleteAiAgent", ({ path }) => Effect.flatMap(CurrentAccount, (account) => Effect.as(agents.remove(account, path.id), { success: true as const })))))

/** The public send's field names as send-text's body names them. */
const SEND_TEXT_FIELDS = { fullPhoneNumber: "to", "data.message": "text" }

const AppMessagesHttpLive = apiGroup(HeraldApi, "appMessages", (handlers) =>
  Effect.map(PublicMessages, (messages) =>
    handlers.handle("sendText", ({ payload }) =>
      Effect.flatMap(CurrentAccount, (account) =>
        messages.send(account, { fullPhoneNumber: payload.to, type: "Text", data: { message: payload.text } }).pipe(
          // A text is free and uses no template: neither refusal can happen.
          Effect.catchTags({ InsufficientBalance: Effect.die, TemplateNotUsable: Effect.die }),
          (sent) => renameFields(sent, SEND_TEXT_FIELDS),
          Effect.map((queued) => ({
          success: true as const,
          message_id: queued.id,
            status: "queued" as const
          }))
        )))))

/** The /api/v1/app groups of the app API's capability (contacts, segments, AI agents, send-text). */
export const AppHttpLive = Layer.mergeAll(ContactsHttpLive, SegmentsHttpLive, AiAgentsHttpLive, AppMessagesHttpLive)
