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

/** Runs `f` with the request's partner id. */
const asPartner = <A, E, R>(f: (partnerId: string) => Effect.Effect<A, E, R>) => Effect.flatMap(CurrentPartner, (partner) => f(partner.partnerId))

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
      .handle("createIdentity", ({ payload }) => asPartner((p) => identities.create(p, payload.identity)))
      .handle("listIdentities", ({ urlParams }) => asPartner((p) => identities.list(p, urlParams)))
      .handle("getIdentity", ({ path }) => asPartner((p) => identities.get(p, path.id)))
      .handle("deleteIdentity", ({ path }) => asPartner((p) => identities.remove(p, path.id)))
      .handle("createConfigurationSet", ({ payload }) => asPartner((p) => sets.create(p, payload)))
      .handle("listConfigurationSets", ({ urlParams }) => asPartner((p) => sets.list(p, urlParams)))
      .handle("getConfigurationSet", ({ path }) => asPartner((p) => sets.get(p, path.name)))
      .handle("updateConfigurationSet", ({ path, payload }) => asPartner((p) => sets.update(p, path.name, payload)))
      .handle("deleteConfigurationSet", ({ path }) => asPartner((p) => sets.remove(p, path.name)))
      .handle("createTemplate", ({ payload }) => asPartner((p) => templates.create(p, payload)))
      .handle("listTemplates", ({ urlParams }) => asPartner((p) => templates.list(p, urlParams)))
      .handle("getTemplate", ({ path }) => asPartner((p) => templates.get(p, path.name)))
      .handle("updateTemplate", ({ path, payload }) => asPartner((p) => templates.update(p, path.name, payload)))
      .handle("deleteTemplate", ({ path }) => asPartner((p) => templates.remove(p, path.name)))
      .handle("listSuppression", ({ urlParams }) => asPartner((p) => suppression.list(p, urlParams)))
      .handle("getSuppression", ({ path }) => asPartner((p) => suppression.get(p, path.email)))
      .handle("putSuppression", ({ path, payload }) => asPartner((p) => suppression.put(p, path.email, payload.reason)))
      .handle("deleteSuppression", ({ path }) => asPartner((p) => suppression.remove(p, path.email)))
      .handle("sendEmail", ({ payload }) => asPartner((p) => emails.send(p, payload)))
      .handle("getEmail", ({ path }) => asPartner((p) => emails.get(p, path.message_id)))
      .handle("listEvents", ({ urlParams }) => asPartner((p) => emails.events(p, urlParams)))
      .handle("requestProductionAccess", ({ payload }) => asPartner((p) => access.request(p, payload)))
      .handle("listProductionAccess", ({ urlParams }) => asPartner((p) => access.list(p, urlParams)))
      .handle("quotas", () => asPartner(stats.quotas))
      .handle("stats", () => asPartner(stats.stats))
      .handle("reputation", () => asPartner(stats.reputation))
  }))

export const PartnerEmailVerifyHttpLive = apiGroup(HeraldApi, "partnerEmailVerify", (handlers) =>
  Effect.map(Identities, (identities) => handlers.handle("verify", ({ urlParams }) => identities.verify(urlParams.token))))
