import { Effect } from "effect"
import { ConfigurationSets } from "../../email/ConfigurationSets.ts"
import { Emails } from "../../email/Emails.ts"
import { EmailTemplates } from "../../email/EmailTemplates.ts"
import { Identities } from "../../email/Identities.ts"
import { ProductionAccess } from "../../email/ProductionAccess.ts"
import { SendingStats } from "../../email/SendingStats.ts"
import { Suppression } from "../../email/Suppression.ts"
import { HeraldApi } from "../Api.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { CurrentPartner } from "./PartnerEmailApi.ts"
import {
  ok,
  presentAccessRequest,
  presentConfigurationSet,
  presentEvent,
  presentIdentity,
  presentMessage,
  presentPartnerPage,
  presentQuotas,
  presentReputation,
  presentStats,
  presentSuppressed,
  presentTemplate
} from "./presentEmail.ts"

/** Runs `f` with the request's partner id. */
const asPartner = <A, E, R>(f: (partnerId: string) => Effect.Effect<A, E, R>) => Effect.flatMap(CurrentPartner, (partner) => f(partner.partnerId))

/** A value presented as one row of an answer, `success` first. */
const one = <A, B extends object>(present: (value: A) => B) => (value: A) => ({ ...ok, ...present(value) })
const done = () => ok

export const PartnerEmailHttpLive = apiGroup(HeraldApi, "partnerEmail", (handlers) =>
  Effect.gen(function*() {
    const identities = yield* Identities
    const sets = yield* ConfigurationSets
    const templates = yield* EmailTemplates
    const suppression = yield* Suppression
    const emails = yield* Emails
    const access = yield* ProductionAccess
    const stats = yield* SendingStats
    return handlers
      .handle("createIdentity", ({ payload }) => asPartner((p) => Effect.map(identities.create(p, payload.identity), one(presentIdentity))))
      .handle("listIdentities", ({ urlParams }) => asPartner((p) => Effect.map(identities.list(p, urlParams), (page) => presentPartnerPage("identities", page, presentIdentity))))
      .handle("getIdentity", ({ path }) => asPartner((p) => Effect.map(identities.get(p, path.id), one(presentIdentity))))
      .handle("deleteIdentity", ({ path }) => asPartner((p) => Effect.map(identities.remove(p, path.id), done)))
      .handle("createConfigurationSet", ({ payload }) => asPartner((p) => Effect.map(sets.create(p, payload), ({ set, secrets }) => ({ ...ok, ...presentConfigurationSet(set, secrets) }))))
      .handle("listConfigurationSets", ({ urlParams }) => asPartner((p) => Effect.map(sets.list(p, urlParams), (page) => presentPartnerPage("configuration_sets", page, (set) => presentConfigurationSet(set)))))
      .handle("getConfigurationSet", ({ path }) => asPartner((p) => Effect.map(sets.get(p, path.name), one((set) => presentConfigurationSet(set)))))
      .handle("updateConfigurationSet", ({ path, payload }) => asPartner((p) => Effect.map(sets.update(p, path.name, payload), ({ set, secrets }) => ({ ...ok, ...presentConfigurationSet(set, secrets) }))))
      .handle("deleteConfigurationSet", ({ path }) => asPartner((p) => Effect.map(sets.remove(p, path.name), done)))
      .handle("createTemplate", ({ payload }) => asPartner((p) => Effect.map(templates.create(p, payload), one(presentTemplate))))
      .handle("listTemplates", ({ urlParams }) => asPartner((p) => Effect.map(templates.list(p, urlParams), (page) => presentPartnerPage("templates", page, presentTemplate))))
      .handle("getTemplate", ({ path }) => asPartner((p) => Effect.map(templates.get(p, path.name), one(presentTemplate))))
      .handle("updateTemplate", ({ path, payload }) => asPartner((p) => Effect.map(templates.update(p, path.name, payload), one(presentTemplate))))
      .handle("deleteTemplate", ({ path }) => asPartner((p) => Effect.map(templates.remove(p, path.name), done)))
      .handle("listSuppression", ({ urlParams }) => asPartner((p) => Effect.map(suppression.list(p, urlParams), (page) => presentPartnerPage("suppression", page, presentSuppressed))))
      .handle("getSuppression", ({ path }) => asPartner((p) => Effect.map(suppression.get(p, path.email), one(presentSuppressed))))
      .handle("putSuppression", ({ path, payload }) => asPartner((p) => Effect.map(suppression.put(p, path.email, payload.reason), one(presentSuppressed))))
      .handle("deleteSuppression", ({ path }) => asPartner((p) => Effect.map(suppression.remove(p, path.email), done)))
      .handle("sendEmail", ({ payload }) => asPartner((p) => Effect.map(emails.send(p, payload), (messageId) => ({ ...ok, message_id: messageId }))))
      .handle("getEmail", ({ path }) => asPartner((p) => Effect.map(emails.get(p, path.message_id), ({ message, events }) => presentMessage(message, events))))
      .handle("listEvents", ({ urlParams }) => asPartner((p) => Effect.map(emails.events(p, urlParams), (page) => presentPartnerPage("events", page, presentEvent))))
      .handle("requestProductionAccess", ({ payload }) => asPartner((p) => Effect.map(access.request(p, payload), one(presentAccessRequest))))
      .handle("listProductionAccess", ({ urlParams }) => asPartner((p) => Effect.map(access.list(p, urlParams), (page) => presentPartnerPage("production_access", page, presentAccessRequest))))
      .handle("quotas", () => asPartner((p) => Effect.map(stats.quotas(p), presentQuotas)))
      .handle("stats", () => asPartner((p) => Effect.map(stats.stats(p), presentStats)))
      .handle("reputation", () => asPartner((p) => Effect.map(stats.reputation(p), presentReputation)))
  }))

export const PartnerEmailVerifyHttpLive = apiGroup(HeraldApi, "partnerEmailVerify", (handlers) =>
  Effect.map(Identities, (identities) => handlers.handle("verify", ({ urlParams }) => Effect.map(identities.verify(urlParams.token), (identity) => ({ ...ok, identity, status: "VERIFIED" as const })))))
