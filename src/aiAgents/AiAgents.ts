import { Effect } from "effect"
import { FeatureLocked, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { type AgentDefinition, type AgentInput, checkAgent } from "./agentRules.ts"
import { ListCursors } from "../storage/ListCursors.ts"
import { AiAgentsRepo } from "./AiAgentsRepo.ts"

export const AGENTS_LIMIT_DEFAULT = 20
export const AGENTS_LIMIT_MAX = 100

/** `f` for accounts on a plan with AI agents; 403 feature_locked for the others. */
const forAgentsPlan = <Args extends ReadonlyArray<unknown>, A, E>(f: (account: SecretKeyAccount, ...args: Args) => Effect.Effect<A, E>) =>
  (account: SecretKeyAccount, ...args: Args) => Effect.zipRight(requireAgentsPlan(account), f(account, ...args))

const NEW_AGENT: AgentDefinition = { name: "", instructions: "", faq: [], handoffKeywords: [], active: true }

/** AI agents are an Advanced and Enterprise feature (docs/app-api.md). */
const requireAgentsPlan = (account: SecretKeyAccount) =>
  account.plan === "advanced" || account.plan === "enterprise"
    ? Effect.void
    : Effect.fail(new FeatureLocked({ message: `AI agents are part of the Advanced and Enterprise plans; this account is on the ${account.plan} plan` }))

/**
 * AI agent definitions (docs/app-api.md): an FAQ, handoff keywords and instructions kept for the
 * team (no model runs in Herald: an agent answers only with its FAQ, see agentRules.ts).
 * Conversations are assigned to one as `ai:<id>` (src/conversations/Conversations.ts).
 */
export class AiAgents extends Effect.Service<AiAgents>()("herald/aiAgents/AiAgents", {
  effect: Effect.gen(function*() {
    const repo = yield* AiAgentsRepo
    const cursors = yield* ListCursors

    const find = (accountId: string, agentId: string) =>
      Effect.gen(function*() {
        const row = isUuid(agentId) ? yield* repo.find(accountId, agentId) : undefined
        if (row === undefined) return yield* new NotFound({ message: `no AI agent ${agentId}` })
        return row
      })

    const checked = (input: AgentInput, base: AgentDefinition) => {
      const result = checkAgent(input, base)
      return result instanceof Error ? Effect.fail(result) : Effect.succeed(result)
    }

    const create = (account: SecretKeyAccount, input: AgentInput & { readonly name: string }) =>
      Effect.gen(function*() {
        const agent = yield* checked(input, NEW_AGENT)
        const row = yield* repo.insert(account.accountId, agent)
        return row
      })

    const update = (account: SecretKeyAccount, agentId: string, input: AgentInput) =>
      Effect.gen(function*() {
        const current = yield* find(account.accountId, agentId)
        const agent = yield* checked(input, current)
        const row = yield* repo.update(account.accountId, agentId, agent)
        if (row === undefined) return yield* new NotFound({ message: `no AI agent ${agentId}` })
        return row
      })

    const get = (account: SecretKeyAccount, agentId: string) =>
      find(account.accountId, agentId)

    /** Deleting an agent unassigns its conversations (the foreign key sets them to nobody). */
    const remove = (account: SecretKeyAccount, agentId: string) =>
      Effect.gen(function*() {
        const deleted = isUuid(agentId) ? yield* repo.remove(account.accountId, agentId) : false
        if (!deleted) return yield* new NotFound({ message: `no AI agent ${agentId}` })
      })

    const list = (account: SecretKeyAccount, query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
      Effect.gen(function*() {
        const scope = { list: "ai-agents", accountId: account.accountId }
        const after = yield* cursors.readPosition(scope, query.cursor)
        const limit = query.limit ?? AGENTS_LIMIT_DEFAULT
        const rows = yield* repo.page(account.accountId, after, limit + 1)
        const page = cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.agentId }))
        return { items: page.rows, nextCursor: page.nextCursor }
      })

    // Every path, reads included, is the Advanced plan's: the check comes before anything else.
    return {
      create: forAgentsPlan(create),
      update: forAgentsPlan(update),
      get: forAgentsPlan(get),
      remove: forAgentsPlan(remove),
      list: forAgentsPlan(list)
    } as const
  }),
  dependencies: [ListCursors.Default, AiAgentsRepo.Default]
}) {}
