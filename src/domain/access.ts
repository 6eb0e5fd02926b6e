import { Effect, Schema } from "effect"
import { ApiKeyEndpointNotAllowed, Forbidden } from "./errors.ts"
import type { Role } from "./identity.ts"
import type { Principal } from "./signIn.ts"

/** The scopes the panel offers (contract), then the others keys may carry. */
export const PANEL_SCOPES = [
  "broadcasts:read",
  "broadcasts:write",
  "contacts:read",
  "contacts:write",
  "auto_replies:read",
  "webhooks:read",
  "webhooks:write"
] as const
export const Scope = Schema.Literal(...PANEL_SCOPES, "messages:send", "templates:read", "templates:write")
export type Scope = typeof Scope.Type

/**
 * Whether granted scopes satisfy a required one: a write scope grants its read half;
 * `messages:send` has no read half and is granted by nothing else.
 */
export const scopeSatisfied = (granted: ReadonlyArray<string>, required: Scope): boolean => {
  if (granted.includes(required)) return true
  if (required.endsWith(":read")) return granted.includes(required.replace(/:read$/, ":write"))
  return false
}

/**
 * GET routes an API key may call, and the scope each needs: exactly the contract's "Reads reachable
 * with an API key" and its personal-data reads, nothing more (rule 9: any other path answers 403
 * api_key_endpoint_not_allowed; a single bot's read, /bots/{bot_id}, is not among them). Scopes
 * per DESIGN.md: `null` is any valid key; personal-data paths need contacts:read whatever they
 * hang off.
 */
export const API_KEY_ROUTES: ReadonlyMap<string, Scope | null> = new Map<string, Scope | null>([
  ["/api/v1/rcs/bots", null],
  ["/api/v1/rcs/templates", "templates:read"],
  ["/api/v1/rcs/contact-lists", "contacts:read"],
  ["/api/v1/rcs/broadcasts", "broadcasts:read"],
  ["/api/v1/rcs/broadcasts/:id", "broadcasts:read"],
  ["/api/v1/rcs/auto-replies/:bot_id", "auto_replies:read"],
  ["/api/v1/rcs/webhooks", "webhooks:read"],
  ["/api/v1/rcs/broadcasts/:id/targets", "contacts:read"],
  ["/api/v1/rcs/auto-replies/:bot_id/fires", "contacts:read"],
  ["/api/v1/rcs/reports/messages", "contacts:read"],
  ["/api/v1/rcs/reports/messages/:id/preview", "contacts:read"],
  ["/api/v1/rcs/recipients/:phone", "contacts:read"]
])

/**
 * What each scope the panel offers lets a key do in this release: the scopes of API_KEY_ROUTES it
 * satisfies. Keys only read today (contract, Versioning: key writes are announced), so a write
 * scope grants its read half and nothing more (`broadcasts:write` → `["broadcasts:read"]`).
 */
export const PANEL_SCOPE_GRANTS: Readonly<Record<string, ReadonlyArray<Scope>>> = Object.fromEntries(
  PANEL_SCOPES.map((scope) => [
    scope,
    [...new Set([...API_KEY_ROUTES.values()].filter((required): required is Scope => required !== null && scopeSatisfied([scope], required)))]
  ])
)

const RANK: Record<Role, number> = { viewer: 0, operator: 1, owner: 2 }

/** Roles (DESIGN.md, Team): viewer reads; operator also writes; owner also manages the account. */
export const hasRole = (principal: Principal, minimum: Role): boolean => RANK[principal.role] >= RANK[minimum]

/** ["*"] is every bot, including bots created later. */
export const botInScope = (principal: Principal, botId: string): boolean => principal.bots.includes("*") || principal.bots.includes(botId)

export const API_KEY_PREFIX = "rcs_pk_live_"

/** Whether the caller is the account's owner signed in (a user token, not a key). */
export const isOwnerSession = (principal: Principal): boolean => principal.credential.kind === "user" && hasRole(principal, "owner")

/**
 * Account management (team, API keys, security) is the owner's, and needs a signed-in session: a
 * key never reaches it, whatever its scopes.
 */
export const requireOwnerSession = (principal: Principal, activity: string) =>
  principal.credential.kind !== "user"
    ? Effect.fail(new ApiKeyEndpointNotAllowed({ message: `API keys cannot ${activity}` }))
    : hasRole(principal, "owner")
    ? Effect.void
    : Effect.fail(new Forbidden({ message: `only the account owner can ${activity}` }))

/** The caller's role must be at least `minimum` (viewer < operator < owner). */
export const requireRole = (principal: Principal, minimum: Role, activity: string) =>
  hasRole(principal, minimum) ? Effect.void : Effect.fail(new Forbidden({ message: `only an ${minimum} or higher can ${activity}` }))

/**
 * Who may make each write that takes an Idempotency-Key: checked by its service, and again before
 * a stored answer is replayed (docs/idempotency.md), so a replay reaches only whom the route
 * itself would answer now.
 */
export const mayWrite = {
  sendMessages: (principal: Principal) => requireRole(principal, "operator", "send messages"),
  createBroadcasts: (principal: Principal) => requireRole(principal, "operator", "create broadcasts"),
  importContacts: (principal: Principal) => requireRole(principal, "operator", "import contacts"),
  manageApiKeys: (principal: Principal) => requireOwnerSession(principal, "manage API keys"),
  generateSecretKey: (principal: Principal) => requireOwnerSession(principal, "generate the secret key")
} as const

/** Whether the caller sees every bot (["*"]) rather than a list of them. */
export const seesAllBots = (principal: Principal): boolean => principal.bots.includes("*")
