import { Effect } from "effect"
import { ConfigurationSets } from "../../src/email/ConfigurationSets.ts"
import { EmailTemplates } from "../../src/email/EmailTemplates.ts"
import { ProductionAccess } from "../../src/email/ProductionAccess.ts"
import { SendingStats } from "../../src/email/SendingStats.ts"
import { Suppression } from "../../src/email/Suppression.ts"
import {
  ok,
  presentAccessRequest,
  presentConfigurationSet,
  presentPartnerPage,
  presentQuotas,
  presentReputation,
  presentStats,
  presentSuppressed,
  presentTemplate
} from "../../src/http/partner/presentEmail.ts"

// The e-mail services with their answers presented as the partner API presents them
// (src/http/partner/PartnerEmailHttp.ts): the services return domain values, and the tests of
// test/email check what a partner reads.

const one = <A, B extends object>(present: (value: A) => B) => (value: A) => ({ ...ok, ...present(value) })

export const PresentedSets = Effect.map(ConfigurationSets, (sets) => ({
  create: (...args: Parameters<typeof sets.create>) =>
    Effect.map(sets.create(...args), ({ secrets, set }) => ({ ...ok, ...presentConfigurationSet(set, secrets) })),
  list: (...args: Parameters<typeof sets.list>) =>
    Effect.map(sets.list(...args), (page) => presentPartnerPage("configuration_sets", page, (set) => presentConfigurationSet(set))),
  get: (...args: Parameters<typeof sets.get>) => Effect.map(sets.get(...args), one((set) => presentConfigurationSet(set))),
  update: (...args: Parameters<typeof sets.update>) =>
    Effect.map(sets.update(...args), ({ secrets, set }) => ({ ...ok, ...presentConfigurationSet(set, secrets) })),
  remove: (...args: Parameters<typeof sets.remove>) => Effect.as(sets.remove(...args), ok),
  idOf: sets.idOf
}))

export const PresentedTemplates = Effect.map(EmailTemplates, (templates) => ({
  create: (...args: Parameters<typeof templates.create>) => Effect.map(templates.create(...args), one(presentTemplate)),
  list: (...args: Parameters<typeof templates.list>) => Effect.map(templates.list(...args), (page) => presentPartnerPage("templates", page, presentTemplate)),
  get: (...args: Parameters<typeof templates.get>) => Effect.map(templates.get(...args), one(presentTemplate)),
  update: (...args: Parameters<typeof templates.update>) => Effect.map(templates.update(...args), one(presentTemplate)),
  remove: (...args: Parameters<typeof templates.remove>) => Effect.as(templates.remove(...args), ok),
  find: templates.find
}))

export const PresentedSuppression = Effect.map(Suppression, (suppression) => ({
  list: (...args: Parameters<typeof suppression.list>) =>
    Effect.map(suppression.list(...args), (page) => presentPartnerPage("suppression", page, presentSuppressed)),
  get: (...args: Parameters<typeof suppression.get>) => Effect.map(suppression.get(...args), one(presentSuppressed)),
  put: (...args: Parameters<typeof suppression.put>) => Effect.map(suppression.put(...args), one(presentSuppressed)),
  remove: (...args: Parameters<typeof suppression.remove>) => Effect.as(suppression.remove(...args), ok)
}))

export const PresentedAccess = Effect.map(ProductionAccess, (access) => ({
  request: (...args: Parameters<typeof access.request>) => Effect.map(access.request(...args), one(presentAccessRequest)),
  list: (...args: Parameters<typeof access.list>) =>
    Effect.map(access.list(...args), (page) => presentPartnerPage("production_access", page, presentAccessRequest))
}))

export const PresentedStats = Effect.map(SendingStats, (stats) => ({
  quotas: (partnerId: string) => Effect.map(stats.quotas(partnerId), presentQuotas),
  stats: (partnerId: string) => Effect.map(stats.stats(partnerId), presentStats),
  reputation: (partnerId: string) => Effect.map(stats.reputation(partnerId), presentReputation)
}))
