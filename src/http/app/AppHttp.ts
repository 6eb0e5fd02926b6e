import { Effect, Layer } from "effect"
import { AiAgents } from "../../aiAgents/AiAgents.ts"
import type { AiAgent } from "../../aiAgents/AiAgentsRepo.ts"
import { presentPage } from "../page.ts"
import { presentAiAgent } from "./presentAiAgent.ts"
import { AppContacts } from "../../customers/AppContacts.ts"
import { OptKeywords, type OptKeywordsView } from "../../customers/OptKeywords.ts"
import { Segments } from "../../segments/Segments.ts"
import { PublicMessages } from "../../whatsapp/PublicMessages.ts"
import { renameFields } from "../../domain/errors.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentAccount } from "./AppAuthentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentCustomer } from "../customerPresent.ts"
import { presentSegment } from "./appPresent.ts"

const done = { success: true as const }

const ContactsHttpLive = apiGroup(HeraldApi, "appContacts", (handlers) =>
  Effect.map(Effect.all([AppContacts, Segments]), ([contacts, segments]) =>
    handlers
      .handle("listContacts", ({ urlParams }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          Effect.map(contacts.list(account, urlParams, (segmentId) => segments.queryFor(account, segmentId)), (page) => presentPage("contacts", page, presentCustomer))))
      .handle("createContact", ({ payload }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          Effect.map(contacts.create(account, payload), (saved) => ({ success: true as const, created: saved.created, contact: presentCustomer(saved.contact) }))))
      .handle("getContact", ({ path }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(contacts.get(account, path.id), (row) => ({ success: true as const, contact: presentCustomer(row) }))))
      .handle("updateContact", ({ path, payload }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(contacts.update(account, path.id, payload), (row) => ({ success: true as const, contact: presentCustomer(row) }))))
      .handle("deleteContact", ({ path }) => Effect.flatMap(CurrentAccount, (account) => Effect.as(contacts.remove(account, path.id), done)))))

const SegmentsHttpLive = apiGroup(HeraldApi, "appSegments", (handlers) =>
  Effect.map(Segments, (segments) =>
    handlers
      .handle("listSegments", ({ urlParams }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(segments.list(account, urlParams), (page) => presentPage("segments", page, presentSegment))))
      .handle("createSegment", ({ payload }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(segments.create(account, payload), (segment) => ({ success: true as const, segment: presentSegment(segment) }))))
      .handle("getSegment", ({ path }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(segments.get(account, path.id), (segment) => ({ success: true as const, segment: presentSegment(segment) }))))
      .handle("updateSegment", ({ path, payload }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          Effect.map(segments.update(account, path.id, payload), (segment) => ({ success: true as const, segment: presentSegment(segment) }))))
      .handle("deleteSegment", ({ path }) => Effect.flatMap(CurrentAccount, (account) => Effect.as(segments.remove(account, path.id), done)))
      .handle("segmentContacts", ({ path, urlParams }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(segments.members(account, path.id, urlParams), (page) => presentPage("contacts", page, presentCustomer))))))

const presentOptKeywords = (view: OptKeywordsView) => ({
  success: true as const,
  opt_out: [...view.optOut],
  opt_in: [...view.optIn],
  custom: view.custom,
  updated_at: view.updatedAt === null ? null : view.updatedAt.toISOString()
})

const OptKeywordsHttpLive = apiGroup(HeraldApi, "appOptKeywords", (handlers) =>
  Effect.map(OptKeywords, (keywords) =>
    handlers
      .handle("getOptKeywords", () => Effect.flatMap(CurrentAccount, (account) => Effect.map(keywords.read(account.accountId), presentOptKeywords)))
      .handle("setOptKeywords", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => Effect.map(keywords.put(account.accountId, payload), presentOptKeywords)))
      .handle("resetOptKeywords", () => Effect.flatMap(CurrentAccount, (account) => Effect.map(keywords.reset(account.accountId), presentOptKeywords)))))

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
          // A text is free and uses no template: none of these refusals can happen.
          Effect.catchTags({ InsufficientBalance: Effect.die, TemplateNotUsable: Effect.die, RecipientOptedOut: Effect.die }),
          (sent) => renameFields(sent, SEND_TEXT_FIELDS),
          Effect.map((queued) => ({
          success: true as const,
          message_id: queued.id,
            status: "queued" as const
          }))
        )))))

/** The /api/v1/app groups of the app API's capability (contacts, segments, opt-out keywords, AI agents, send-text). */
export const AppHttpLive = Layer.mergeAll(ContactsHttpLive, SegmentsHttpLive, OptKeywordsHttpLive, AiAgentsHttpLive, AppMessagesHttpLive)
