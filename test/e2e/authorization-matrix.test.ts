import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { decodeJwt, importJWK, SignJWT, UnsecuredJWT } from "jose"
import { HeraldApi } from "../../src/http/Api.ts"
import { putDeadLetter } from "../support/deadLetters.ts"
import { useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { newestSigningKey } from "../support/sealed.ts"

// Every authenticated route × every kind of credential. A route joins by adding a row to ROUTES;
// the coverage test below fails for any route of the API missing from this table.

type Role = "viewer" | "operator" | "owner"
interface Rule {
  readonly method: string
  /** The route as declared; `:bot_id` and `:key_id` / `:member_id` are filled in from fixtures. */
  readonly route: string
  /** Least role a user token needs. */
  readonly role: Role
  /** API keys: false = not allowed at all; null = any valid key; a scope = keys with that scope. */
  readonly key: false | null | string
  /** Hangs off a bot: a member scoped to other bots gets bot_not_in_scope. */
  readonly bot?: boolean
  /** Needs a member who sees every bot: a bot-scoped member gets forbidden. */
  readonly allBots?: boolean
  /** Names an object of the account: another account's token gets 404. */
  readonly owned?: boolean
  readonly body?: () => unknown
  /** A fresh object for each credential, for routes that destroy it: replaces :webhook_id, :template_id, :rule_id, :list_id or a broadcast's :id. */
  readonly fresh?: () => Promise<string>
}

// Answered by the invited person alone, whatever their role or account: tested apart below
// ("an invitation is answered by its invitee only").
const INVITEE_ONLY = new Set(["POST /api/v1/rcs/team/invitations/:member_id/accept", "POST /api/v1/rcs/team/invitations/:member_id/decline"])

const PUBLIC = new Set([
  "GET /health/live", "GET /health/ready", "POST /api/v1/rcs/auth/login", "POST /api/v1/rcs/auth/select-account",
  // The verification link: its token is the credential.
  "GET /api/v1/partner/email/verify"
])

// The partner e-mail API: a `pk_partner_` key only; every other credential of Herald's is 401; a
// partner's own rows are unknown (404) to another partner.
const PARTNER = "/api/v1/partner/email"
const PARTNER_ROUTES: ReadonlyArray<{ readonly method: string; readonly route: string; readonly owned?: boolean; readonly body?: () => unknown }> = [
  { method: "POST", route: `${PARTNER}/identities`, body: () => ({ identity: `m${Math.random().toString(36).slice(2)}.test` }) },
  { method: "GET", route: `${PARTNER}/identities` },
  { method: "GET", route: `${PARTNER}/identities/:id`, owned: true },
  { method: "DELETE", route: `${PARTNER}/identities/:id`, owned: true },
  { method: "POST", route: `${PARTNER}/configuration-sets`, body: () => ({ name: `m${Math.random().toString(36).slice(2)}` }) },
  { method: "GET", route: `${PARTNER}/configuration-sets` },
  { method: "GET", route: `${PARTNER}/configuration-sets/:name`, owned: true },
  { method: "PATCH", route: `${PARTNER}/configuration-sets/:name`, owned: true, body: () => ({ event_destinations: [] }) },
  { method: "DELETE", route: `${PARTNER}/configuration-sets/:name`, owned: true },
  { method: "POST", route: `${PARTNER}/templates`, body: () => ({ name: `m${Math.random().toString(36).slice(2)}`, subject: "s", text: "t" }) },
  { method: "GET", route: `${PARTNER}/templates` },
  { method: "GET", route: `${PARTNER}/templates/:name`, owned: true },
  { method: "PUT", route: `${PARTNER}/templates/:name`, owned: true, body: () => ({ subject: "s", text: "t" }) },
  { method: "DELETE", route: `${PARTNER}/templates/:name`, owned: true },
  { method: "GET", route: `${PARTNER}/suppression` },
  { method: "GET", route: `${PARTNER}/suppression/:email`, owned: true },
  { method: "PUT", route: `${PARTNER}/suppression/:email`, body: () => ({}) },
  { method: "DELETE", route: `${PARTNER}/suppression/:email`, owned: true },
  { method: "POST", route: `${PARTNER}/emails`, body: () => ({ from: "a@unverified.test", to: ["b@unverified.test"], subject: "s", text: "t" }) },
  { method: "GET", route: `${PARTNER}/emails/:message_id`, owned: true },
  { method: "GET", route: `${PARTNER}/events` },
  { method: "POST", route: `${PARTNER}/production-access`, body: () => ({ mail_type: "MARKETING", website_url: "https://m.test", use_case_description: "matrix" }) },
  { method: "GET", route: `${PARTNER}/production-access` },
  { method: "GET", route: `${PARTNER}/quotas` },
  { method: "GET", route: `${PARTNER}/stats` },
  { method: "GET", route: `${PARTNER}/reputation` }
]
const partnerFixtures = { identityId: "", messageId: "00000000-0000-4000-8000-0000000000ee", keyA: "", keyB: "" }

const fixtures = { broadcastId: "", messageId: "", bot: "", otherBot: "", keyId: "", memberId: "", webhookId: "", deliveryId: "", templateId: "", ruleId: "", listId: "" }

const ROUTES: ReadonlyArray<Rule> = [
  { method: "POST", route: "/api/v1/rcs/auth/password", role: "viewer", key: false, body: () => ({}) },
  { method: "POST", route: "/api/v1/rcs/auth/2fa/setup", role: "viewer", key: false },
  { method: "POST", route: "/api/v1/rcs/auth/2fa/enable", role: "viewer", key: false, body: () => ({}) },
  { method: "POST", route: "/api/v1/rcs/auth/2fa/disable", role: "viewer", key: false, body: () => ({}) },
  { method: "GET", route: "/api/v1/rcs/bots", role: "viewer", key: null },
  // Not on the contract's API-key allow-list (only the bot list is): a key gets 403.
  { method: "GET", route: "/api/v1/rcs/bots/:bot_id", role: "viewer", key: false, bot: true, owned: true },
  { method: "GET", route: "/api/v1/rcs/api-keys", role: "owner", key: false },
  { method: "POST", route: "/api/v1/rcs/api-keys", role: "owner", key: false, body: () => ({ name: "matrix", scopes: ["contacts:read"] }) },
  { method: "PATCH", route: "/api/v1/rcs/api-keys/:key_id", role: "owner", key: false, owned: true, body: () => ({ name: "renamed" }) },
  { method: "DELETE", route: "/api/v1/rcs/api-keys/:key_id", role: "owner", key: false, owned: true },
  { method: "GET", route: "/api/v1/rcs/team", role: "viewer", key: false },
  { method: "POST", route: "/api/v1/rcs/team", role: "owner", key: false, body: () => ({ email: `m${Math.random().toString(36).slice(2)}@example.com`, role: "viewer", assigned_bots: ["*"], password: "matrix password" }) },
  { method: "PATCH", route: "/api/v1/rcs/team/:member_id", role: "owner", key: false, owned: true, body: () => ({ assigned_bots: ["*"] }) },
  { method: "DELETE", route: "/api/v1/rcs/team/:member_id", role: "owner", key: false, owned: true },
  // A person's own pending invitations (every signed-in person has a list, maybe empty).
  { method: "GET", route: "/api/v1/rcs/team/invitations", role: "viewer", key: false },
  { method: "POST", route: "/api/v1/app/developer/secret-key", role: "owner", key: false },
  { method: "PUT", route: "/api/v1/app/developer/webhook", role: "owner", key: false, body: () => ({ url: "https://example.com/developer" }) },
  { method: "GET", route: "/api/v1/app/developer/webhook", role: "owner", key: false },
  { method: "POST", route: "/api/v1/app/developer/webhook/rotate-secret", role: "owner", key: false },
  { method: "DELETE", route: "/api/v1/app/developer/webhook", role: "owner", key: false },
  { method: "PUT", route: "/api/v1/app/meta-ads/capi/config", role: "owner", key: false, body: () => ({ dataset_id: "1234567890", access_token: "EAAB-matrix-token" }) },
  { method: "GET", route: "/api/v1/app/meta-ads/capi/config", role: "owner", key: false },
  { method: "GET", route: "/api/v1/rcs/webhooks", role: "viewer", key: "webhooks:read" },
  // Herald's additions (the console's): not on the contract's API-key allow-list, so a key gets 403.
  { method: "GET", route: "/api/v1/rcs/webhooks/stats", role: "viewer", key: false },
  { method: "GET", route: "/api/v1/rcs/overview", role: "viewer", key: false },
  { method: "POST", route: "/api/v1/rcs/webhooks", role: "operator", key: false, bot: true, body: () => ({ url: "https://example.com/hook", events: ["message.sent"], bot_id: fixtures.bot }) },
  { method: "PATCH", route: "/api/v1/rcs/webhooks/:webhook_id", role: "operator", key: false, bot: true, owned: true, body: () => ({ active: true }) },
  // The same rules as PATCH: API keys reach no write (contract, Authentication rule 9).
  { method: "POST", route: "/api/v1/rcs/webhooks/:webhook_id/rotate-secret", role: "operator", key: false, bot: true, owned: true },
  { method: "POST", route: "/api/v1/rcs/webhooks/:webhook_id/test", role: "operator", key: false, bot: true, owned: true },
  { method: "GET", route: "/api/v1/rcs/webhooks/:webhook_id/deliveries", role: "viewer", key: false, bot: true, owned: true },
  { method: "DELETE", route: "/api/v1/rcs/webhooks/:webhook_id", role: "operator", key: false, bot: true, owned: true, fresh: () => newEndpoint() },
  { method: "GET", route: "/api/v1/rcs/webhooks/dead-letter", role: "operator", key: false },
  {
    method: "POST",
    route: "/api/v1/rcs/apply",
    role: "operator",
    key: false,
    allBots: true,
    body: () => ({ bot_name: "Matrix", company_name: "Matrix Ltd", company_gstin: "27AAPFU0939F1ZV", brand_website: "https://matrix.example.com", use_case: "promotional" })
  },
  { method: "POST", route: "/api/v1/rcs/webhooks/dead-letter/:delivery_id/replay", role: "operator", key: false, owned: true },
  { method: "GET", route: "/api/v1/rcs/templates", role: "viewer", key: "templates:read" },
  { method: "POST", route: "/api/v1/rcs/templates", role: "operator", key: false, bot: true, body: () => templateBody() },
  { method: "GET", route: "/api/v1/rcs/templates/:template_id", role: "viewer", key: false, bot: true, owned: true },
  { method: "DELETE", route: "/api/v1/rcs/templates/:template_id", role: "operator", key: false, bot: true, owned: true, fresh: () => newTemplate() },
  { method: "GET", route: "/api/v1/rcs/auto-replies/:bot_id", role: "viewer", key: "auto_replies:read", bot: true, owned: true },
  { method: "POST", route: "/api/v1/rcs/auto-replies/:bot_id", role: "operator", key: false, bot: true, owned: true, body: () => ruleBody() },
  { method: "GET", route: "/api/v1/rcs/auto-replies/:bot_id/fires", role: "viewer", key: "contacts:read", bot: true, owned: true },
  { method: "PATCH", route: "/api/v1/rcs/auto-replies/:bot_id/:rule_id", role: "operator", key: false, bot: true, owned: true, body: () => ({ active: true }) },
  { method: "POST", route: "/api/v1/rcs/messages/send", role: "operator", key: false, bot: true, body: () => ({ bot_id: fixtures.bot, to: "+919876541234", text: "matrix" }) },
  { method: "GET", route: "/api/v1/rcs/reports/messages", role: "viewer", key: "contacts:read" },
  { method: "GET", route: "/api/v1/rcs/reports/messages/:id/preview", role: "viewer", key: "contacts:read", bot: true, owned: true },
  // Not on the contract's API-key allow-list (src/domain/access.ts): a key gets 403, whatever its scopes.
  { method: "GET", route: "/api/v1/rcs/messages/:id", role: "viewer", key: false, bot: true, owned: true },
  { method: "GET", route: "/api/v1/rcs/recipients/:phone", role: "viewer", key: "contacts:read" },
  { method: "GET", route: "/api/v1/rcs/wallet", role: "owner", key: false },
  { method: "DELETE", route: "/api/v1/rcs/auto-replies/:bot_id/:rule_id", role: "operator", key: false, bot: true, owned: true, fresh: () => newRule() },
  // Contact lists are account-wide: no bot, so a bot-scoped member is treated by its role alone.
  { method: "GET", route: "/api/v1/rcs/contact-lists", role: "viewer", key: "contacts:read" },
  { method: "POST", route: "/api/v1/rcs/contact-lists", role: "operator", key: false, body: () => ({ name: `matrix ${Math.random().toString(36).slice(2)}` }) },
  { method: "GET", route: "/api/v1/rcs/contact-lists/:list_id", role: "viewer", key: false, owned: true },
  { method: "DELETE", route: "/api/v1/rcs/contact-lists/:list_id", role: "operator", key: false, owned: true, fresh: () => newList() },
  { method: "GET", route: "/api/v1/rcs/contact-lists/:list_id/contacts", role: "viewer", key: false, owned: true },
  { method: "POST", route: "/api/v1/rcs/contact-lists/:list_id/contacts", role: "operator", key: false, owned: true, body: () => ({ contacts: [{ phone: "+919876541234" }] }) },
  { method: "GET", route: "/api/v1/rcs/broadcasts", role: "viewer", key: "broadcasts:read" },
  { method: "POST", route: "/api/v1/rcs/broadcasts", role: "operator", key: false, bot: true, body: () => broadcastBody() },
  { method: "GET", route: "/api/v1/rcs/broadcasts/:id", role: "viewer", key: "broadcasts:read", bot: true, owned: true },
  { method: "GET", route: "/api/v1/rcs/broadcasts/:id/targets", role: "viewer", key: "contacts:read", bot: true, owned: true },
  { method: "POST", route: "/api/v1/rcs/broadcasts/:id/cancel", role: "operator", key: false, bot: true, owned: true, fresh: () => newBroadcast() },
  { method: "POST", route: "/api/v1/rcs/broadcasts/:id/retry-failed", role: "operator", key: false, bot: true, owned: true }
]

// Routes of the secret-key surfaces (/api/v1/app/* but key management, /api/v1/public/*):
// `sk_live_` only, plan-gated; the public API takes it as Basic. None of this account's WhatsApp
// answers (no number, unknown template) is an authorization answer.
// /app/me answers Starter too; AI agents are Advanced and up (this account is on Growth).
const SECRET_KEY_ROUTES: ReadonlyArray<{
  readonly method: string
  readonly route: string
  readonly scheme?: "Basic"
  readonly body?: unknown
  readonly expect?: Readonly<Record<string, string>>
}> = [
  { method: "GET", route: "/api/v1/app/me", expect: { "Starter plan's secret key": "allowed" } },
  { method: "GET", route: "/api/v1/app/billing" },
  { method: "GET", route: "/api/v1/app/contacts" },
  { method: "POST", route: "/api/v1/app/contacts", body: { phone: "+919876541234" } },
  { method: "GET", route: "/api/v1/app/contacts/:id" },
  { method: "PATCH", route: "/api/v1/app/contacts/:id", body: { name: "x" } },
  { method: "DELETE", route: "/api/v1/app/contacts/:id" },
  { method: "POST", route: "/api/v1/app/contacts/import", body: { contacts: [{ phone: "+919876541234" }] } },
  { method: "GET", route: "/api/v1/app/segments" },
  { method: "POST", route: "/api/v1/app/segments", body: { name: "matrix" } },
  { method: "GET", route: "/api/v1/app/segments/:id" },
  { method: "PATCH", route: "/api/v1/app/segments/:id", body: { name: "matrix 2" } },
  { method: "DELETE", route: "/api/v1/app/segments/:id" },
  { method: "GET", route: "/api/v1/app/segments/:id/contacts" },
  { method: "GET", route: "/api/v1/app/opt-out-keywords" },
  { method: "PUT", route: "/api/v1/app/opt-out-keywords", body: { opt_out: ["STOP"], opt_in: ["START"] } },
  { method: "DELETE", route: "/api/v1/app/opt-out-keywords" },
  { method: "POST", route: "/api/v1/app/messages/send-text", body: { to: "+919876541234", text: "hi" } },
  ...([["GET", "/api/v1/app/ai-agents"], ["POST", "/api/v1/app/ai-agents"], ["GET", "/api/v1/app/ai-agents/:id"], ["PATCH", "/api/v1/app/ai-agents/:id"], ["DELETE", "/api/v1/app/ai-agents/:id"]] as const)
    .map(([method, route]) => ({ method, route, body: method === "POST" || method === "PATCH" ? { name: "matrix" } : undefined, expect: { "secret key": "feature_locked" } })),
  { method: "POST", route: "/api/v1/public/message", scheme: "Basic", body: { fullPhoneNumber: "919876541234", type: "Text", data: { message: "hi" } } },
  { method: "GET", route: "/api/v1/public/message/:id", scheme: "Basic" },
  { method: "POST", route: "/api/v1/public/templates", scheme: "Basic", body: { name: "matrix", language: "en", category: "UTILITY", components: [{ type: "BODY", text: "Hello there, this is the matrix" }] } },
  { method: "GET", route: "/api/v1/public/templates", scheme: "Basic" },
  { method: "GET", route: "/api/v1/public/templates/:id", scheme: "Basic" },
  { method: "DELETE", route: "/api/v1/public/templates/:id", scheme: "Basic" },
  { method: "POST", route: "/api/v1/public/track/users", scheme: "Basic", body: { fullPhoneNumber: "919876541234", traits: { plan: "gold" } } },
  { method: "POST", route: "/api/v1/public/customers/search", scheme: "Basic", body: { filters: [{ trait: "plan", op: "eq", value: "gold" }] } },
  { method: "GET", route: "/api/v1/public/customers/:id", scheme: "Basic" },
  { method: "POST", route: "/api/v1/public/chats/assign", scheme: "Basic", body: { fullPhoneNumber: "919876541234", agentEmail: "" } },
  { method: "POST", route: "/api/v1/public/chats/resolve", scheme: "Basic", body: { fullPhoneNumber: "919876541234" } },
  ...(["public", "app"] as const).flatMap((surface) => {
    const scheme = surface === "public" ? { scheme: "Basic" as const } : {}
    return [
      { method: "POST", route: `/api/v1/${surface}/campaigns`, ...scheme, body: { name: "matrix", template: { name: "matrix", languageCode: "en" }, audience: { tags: ["matrix"] } } },
      { method: "GET", route: `/api/v1/${surface}/campaigns`, ...scheme },
      { method: "GET", route: `/api/v1/${surface}/campaigns/:id`, ...scheme },
      { method: "GET", route: `/api/v1/${surface}/campaigns/:id/targets`, ...scheme },
      { method: "POST", route: `/api/v1/${surface}/campaigns/:id/cancel`, ...scheme },
      { method: "POST", route: `/api/v1/${surface}/campaigns/:id/retry-failed`, ...scheme }
    ]
  }),
  { method: "POST", route: "/api/v1/app/meta-ads/capi/events", body: { event_name: "Lead", fullPhoneNumber: "919876541234" } },
  { method: "POST", route: "/api/v1/app/meta-ads/capi/events/batch", body: { events: [{ event_name: "Lead", fullPhoneNumber: "919876541234" }] } },
  { method: "POST", route: "/api/v1/app/meta-ads/capi/events/redrive" },
  { method: "GET", route: "/api/v1/app/meta-ads/capi/events/:id" },
  { method: "GET", route: "/api/v1/app/integrations/logs" }
]
const SECRET_KEY_EXPECTED: Record<string, string> = {
  "no credential": "invalid_api_key",
  "owner": "invalid_api_key",
  "key with scope": "invalid_api_key",
  "secret key": "allowed",
  "replaced secret key": "invalid_api_key",
  "Starter plan's secret key": "feature_locked"
}

const AUTH_CODES = new Set(["unauthorized", "invalid_api_key", "api_key_endpoint_not_allowed", "missing_scope", "forbidden", "bot_not_in_scope", "feature_locked"])

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso)
let node: HeraldProcess
const credentials: Record<string, string | undefined> = {}

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)

const cli = cliFor(env)

const templateBody = () => ({ bot_id: fixtures.bot, name: `matrix ${Math.random().toString(36).slice(2)}`, type: "text", text: "Hello" })
const newTemplate = async () => (await call("POST", "/api/v1/rcs/templates", credentials.owner, templateBody())).body.template_id as string
const ruleBody = () => ({ match: "exact", keyword: "matrix", reply: { text: "Hello" } })
const newRule = async () => (await call("POST", `/api/v1/rcs/auto-replies/${fixtures.bot}`, credentials.owner, ruleBody())).body.rule.rule_id as string
const newList = async () =>
  (await call("POST", "/api/v1/rcs/contact-lists", credentials.owner, { name: `matrix ${Math.random().toString(36).slice(2)}` })).body.list.list_id as string

// Scheduled far ahead: it stays cancellable, and never sends.
const broadcastBody = () => ({
  name: "matrix",
  bot_id: fixtures.bot,
  template_id: fixtures.templateId,
  contact_list_id: fixtures.listId,
  scheduled_at: new Date(Date.now() + 86_400_000).toISOString()
})
const newBroadcast = async () => (await call("POST", "/api/v1/rcs/broadcasts", credentials.owner, broadcastBody())).body.broadcast.id as string

const newEndpoint = async () =>
  (await call("POST", "/api/v1/rcs/webhooks", credentials.owner, { url: "https://example.com/hook", events: ["message.sent"], bot_id: fixtures.bot })).body.webhook_id as string

beforeAll(async () => {
  node = await startHerald(env)
  const account = (await cli("admin", "create-account", "--email", "owner@matrix.io", "--password", "owner password", "--label", "Matrix")).account_id
  await cli("admin", "create-account", "--email", "other@matrix.io", "--password", "other password", "--label", "Other")
  fixtures.bot = (await cli("admin", "create-bot", account, "--name", "B1", "--status", "active")).bot_id
  fixtures.otherBot = (await cli("admin", "create-bot", account, "--name", "B2")).bot_id
  await cli("admin", "set-plan", account, "growth")
  // Broadcasts check the wallet covers their list.
  await cli("admin", "wallet-credit", account, "100")
  const login = async (email: string, password: string) => {
    const r = await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password })
    if (r.body.token) return r.body.token as string
    return (await call("POST", "/api/v1/rcs/auth/select-account", undefined, { session_token: r.body.session_token, account_id: account })).body.token as string
  }
  credentials.owner = await login("owner@matrix.io", "owner password")
  credentials["other account's JWT"] = await login("other@matrix.io", "other password")
  const addMember = async (email: string, role: string, bots: Array<string>) => {
    const r = await call("POST", "/api/v1/rcs/team", credentials.owner, { email, role, assigned_bots: bots, password: "member password" })
    expect(r.status).toBe(200)
    return login(email, "member password")
  }
  credentials.viewer = await addMember("viewer@matrix.io", "viewer", ["*"])
  credentials.operator = await addMember("operator@matrix.io", "operator", ["*"])
  credentials["bot-scoped member"] = await addMember("scoped@matrix.io", "operator", [fixtures.otherBot])
  const target = await call("POST", "/api/v1/rcs/team", credentials.owner, { email: "target@matrix.io", role: "viewer", assigned_bots: ["*"], password: "member password" })
  fixtures.memberId = target.body.member.member_id
  const key = async (scopes: Array<string>) => (await call("POST", "/api/v1/rcs/api-keys", credentials.owner, { name: "k", scopes })).body
  credentials["key without scope"] = (await key(["messages:send"])).raw_key
  credentials["key with scope"] = (await key(["broadcasts:write", "contacts:read", "templates:read", "auto_replies:read", "webhooks:read"])).raw_key
  const revoked = await key(["contacts:read"])
  await call("DELETE", `/api/v1/rcs/api-keys/${revoked.key_id}`, credentials.owner)
  credentials["revoked key"] = revoked.raw_key
  const expired = await key(["contacts:read"])
  await db("UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE key_id = $1", [expired.key_id])
  credentials["expired key"] = expired.raw_key
  fixtures.keyId = (await key(["contacts:read"])).key_id
  // An endpoint on B1 (outside the scoped member's bots) and a dead letter of it to replay.
  fixtures.webhookId = await newEndpoint()
  // A template on B1 too (outside the scoped member's bots).
  fixtures.templateId = await newTemplate()
  // An auto-reply rule on B1 as well.
  fixtures.ruleId = await newRule()
  // A contact list (account-wide).
  fixtures.listId = await newList()
  // A broadcast of B1.
  fixtures.broadcastId = await newBroadcast()
  fixtures.deliveryId = "wd_00000000-0000-4000-8000-000000000001"
  // A message of B1, for its preview.
  fixtures.messageId = "00000000-0000-4000-8000-0000000000aa"
  await db(
    `INSERT INTO messages (message_id, account_id, bot_id, recipient, content, source, status, price)
     SELECT $1, account_id, bot_id, '+919876541234', '{"type":"text","text":"hi","suggestions":[]}', 'api', 'sent', 0.1 FROM bots WHERE bot_id = $2`,
    [fixtures.messageId, fixtures.bot]
  )
  await putDeadLetter(db, fixtures.deliveryId, fixtures.webhookId)
  // Forged user tokens.
  const claims = decodeJwt(credentials.owner!)
  const signing = await newestSigningKey(db)
  const past = Math.floor(Date.now() / 1000) - 8 * 86_400
  credentials["expired JWT"] = await new SignJWT({ ...claims, iat: past, exp: past + 7 * 86_400 }).setProtectedHeader({ alg: "EdDSA", kid: signing.kid }).sign(await importJWK(signing.privateJwk, "EdDSA"))

  // The viewer's token with its role raised, keeping the original signature.
  const viewerClaims = decodeJwt(credentials.viewer!)
  const [vh, , vs] = credentials.viewer!.split(".")
  credentials["tampered JWT"] = `${vh}.${Buffer.from(JSON.stringify({ ...viewerClaims, role: "owner", mid: "" })).toString("base64url")}.${vs}`


  credentials["alg none"] = new UnsecuredJWT({ ...claims }).encode()

  credentials["no credential"] = undefined

  const partnerA = await cli("admin", "create-partner", "--name", "matrix a")
  partnerFixtures.keyA = partnerA.api_key
  partnerFixtures.keyB = (await cli("admin", "create-partner", "--name", "matrix b")).api_key
  await db(
    `INSERT INTO email_messages (message_id, partner_id, from_address, to_addresses, subject, recipient_count, status)
     VALUES ($1, $2, 'a@matrix.test', '{b@matrix.test}', 's', 1, 'QUEUED')`,
    [partnerFixtures.messageId, partnerA.partner_id]
  )
}, 300_000)
afterAll(() => node?.kill())

const RANK: Record<Role, number> = { viewer: 0, operator: 1, owner: 2 }

/** The authorization answer expected for one credential on one route: a code, or "allowed". */
const expected = (rule: Rule, credential: string): string => {
  switch (credential) {
    case "no credential":
    case "expired JWT":
    case "tampered JWT":
    case "alg none":
      return "unauthorized"
    case "revoked key":
    case "expired key":
      return "invalid_api_key"
    case "key without scope":
    case "key with scope":
      if (rule.key === false || rule.method !== "GET") return "api_key_endpoint_not_allowed"
      if (rule.key === null) return "allowed"
      return credential === "key with scope" ? "allowed" : "missing_scope"
    case "other account's JWT":
      return rule.owned ? "not_found" : "allowed"
    case "bot-scoped member":
      if (RANK.operator < RANK[rule.role] || rule.allBots) return "forbidden"
      return rule.bot ? "bot_not_in_scope" : "allowed"
    default:
      return RANK[credential as Role] < RANK[rule.role] ? "forbidden" : "allowed"
  }
}

const CREDENTIALS = [
  "no credential", "expired JWT", "tampered JWT", "alg none", "other account's JWT", "viewer", "operator", "owner",
  "bot-scoped member", "key without scope", "key with scope", "revoked key", "expired key"
]

describe("authorization matrix", () => {
  it("covers every route of the API", () => {
    const declared: Array<string> = []
    for (const group of Object.values((HeraldApi as any).groups) as Array<any>) {
      for (const endpoint of Object.values(group.endpoints) as Array<any>) declared.push(`${endpoint.method} ${endpoint.path}`)
    }
    const covered = new Set([...PUBLIC, ...INVITEE_ONLY, ...[...ROUTES, ...SECRET_KEY_ROUTES, ...PARTNER_ROUTES].map((r) => `${r.method} ${r.route}`)])
    expect(declared.filter((d) => !covered.has(d))).toEqual([])
  })

  for (const rule of ROUTES) {
    it(`${rule.method} ${rule.route}`, async () => {
      const failures: Array<string> = []
      // Owners last: their writes (revoking the fixture key, removing the fixture member) come after the others' tries.
      for (const credential of [...CREDENTIALS.filter((c) => c !== "owner"), "owner"]) {
        const fresh = rule.fresh ? await rule.fresh() : undefined
        const path = rule.route
          .replace(":bot_id", credential === "bot-scoped member" ? fixtures.bot : fixtures.bot)
          .replace(":key_id", fixtures.keyId)
          .replace(":member_id", fixtures.memberId)
          .replace(":webhook_id", fresh ?? fixtures.webhookId)
          .replace(":template_id", fresh ?? fixtures.templateId)
          .replace(":rule_id", fresh ?? fixtures.ruleId)
          .replace(":list_id", fresh ?? fixtures.listId)
          .replace(":delivery_id", fixtures.deliveryId)
          .replace(":id", rule.route.startsWith("/api/v1/rcs/broadcasts/") ? fresh ?? fixtures.broadcastId : fixtures.messageId)
          .replace(":phone", "+919876541234")
        const res = await call(rule.method, path, credentials[credential], rule.body?.())
        const want = expected(rule, credential)
        const got = AUTH_CODES.has(res.body.code) ? res.body.code : res.status === 404 && want === "not_found" ? "not_found" : res.status < 500 ? "allowed" : `status ${res.status}`
        const status = { unauthorized: 401, invalid_api_key: 401, forbidden: 403, bot_not_in_scope: 403, missing_scope: 403, api_key_endpoint_not_allowed: 403, not_found: 404 }[want]
        if (got !== want || (status !== undefined && res.status !== status)) {
          failures.push(`${credential}: expected ${want}, got ${got} (${res.status} ${JSON.stringify(res.body).slice(0, 120)})`)
        }
      }
      expect(failures).toEqual([])
    })
  }

  for (const rule of PARTNER_ROUTES) {
    it(`${rule.method} ${rule.route} (partner key)`, async () => {
      // A fresh owned row per try: a DELETE by the owner must not take it from the next credential.
      const fresh = async () => {
        const name = `m${Math.random().toString(36).slice(2)}`
        const needs = (segment: string) => rule.route.includes(`/${segment}/`)
        const identity = needs("identities") ? (await call("POST", `${PARTNER}/identities`, partnerFixtures.keyA, { identity: `${name}@matrix.test` })).body.id as string : ""
        if (needs("configuration-sets")) await call("POST", `${PARTNER}/configuration-sets`, partnerFixtures.keyA, { name })
        if (needs("templates")) await call("POST", `${PARTNER}/templates`, partnerFixtures.keyA, { name, subject: "s", text: "t" })
        if (needs("suppression")) await call("PUT", `${PARTNER}/suppression/${name}@matrix.test`, partnerFixtures.keyA, {})
        return rule.route.replace(":id", identity).replace(":name", name).replace(":email", `${name}@matrix.test`).replace(":message_id", partnerFixtures.messageId)
      }
      const tries: Record<string, [string | undefined, number, string]> = {
        "no credential": [undefined, 401, "invalid_api_key"],
        "owner": [credentials.owner, 401, "invalid_api_key"],
        "key with scope": [credentials["key with scope"], 401, "invalid_api_key"],
        "secret key": [credentials["secret key"], 401, "invalid_api_key"],
        "another partner's key": [partnerFixtures.keyB, rule.owned ? 404 : 0, rule.owned ? "not_found" : "allowed"],
        "the partner's key": [partnerFixtures.keyA, 0, "allowed"]
      }
      credentials["secret key"] = (await call("POST", "/api/v1/app/developer/secret-key", credentials.owner)).body.secret_key
      tries["secret key"]![0] = credentials["secret key"]
      const failures: Array<string> = []
      for (const [credential, [raw, status, want]] of Object.entries(tries)) {
        const path = rule.owned ? await fresh() : rule.route.replace(":email", "put@matrix.test")
        const res = await call(rule.method, path, raw, rule.body?.())
        const got = res.body.code === "invalid_api_key" ? "invalid_api_key" : res.status === 404 ? "not_found" : res.status < 500 ? "allowed" : `status ${res.status}`
        if (got !== want || (status !== 0 && res.status !== status)) failures.push(`${credential}: expected ${want}, got ${got} (${res.status} ${JSON.stringify(res.body).slice(0, 120)})`)
      }
      expect(failures).toEqual([])
    })
  }

  for (const rule of SECRET_KEY_ROUTES) {
    it(`${rule.method} ${rule.route} (secret key)`, async () => {
      // Made here: the route table above regenerates the owner's key when it tries the endpoint.
      const secretKey = async (token: string | undefined) => (await call("POST", "/api/v1/app/developer/secret-key", token)).body.secret_key as string
      credentials["replaced secret key"] = await secretKey(credentials.owner)
      credentials["secret key"] = await secretKey(credentials.owner)
      credentials["Starter plan's secret key"] = await secretKey(credentials["other account's JWT"])
      const failures: Array<string> = []
      for (const [credential, want] of Object.entries({ ...SECRET_KEY_EXPECTED, ...rule.expect })) {
        const raw = credentials[credential]
        const path = rule.route.replace(":id", "00000000-0000-4000-8000-0000000000ab")
        const res = await call(rule.method, path, raw !== undefined && rule.scheme === "Basic" ? `Basic ${raw}` : raw, rule.body)
        const got = AUTH_CODES.has(res.body.code) ? res.body.code : res.status < 500 ? "allowed" : `status ${res.status}`
        const status = { invalid_api_key: 401, feature_locked: 403 }[want]
        if (got !== want || (status !== undefined && res.status !== status)) {
          failures.push(`${credential}: expected ${want}, got ${got} (${res.status} ${JSON.stringify(res.body).slice(0, 120)})`)
        }
      }
      expect(failures).toEqual([])
    })
  }

  it("POST /api/v1/graphql (secret key as Bearer): GraphQL's codes", async () => {
    const secretKey = async (token: string | undefined) => (await call("POST", "/api/v1/app/developer/secret-key", token)).body.secret_key as string
    credentials["replaced secret key"] = await secretKey(credentials.owner)
    credentials["secret key"] = await secretKey(credentials.owner)
    credentials["Starter plan's secret key"] = await secretKey(credentials["other account's JWT"])
    const expected: Record<string, [number, string]> = {
      "no credential": [401, "UNAUTHENTICATED"],
      "owner": [401, "UNAUTHENTICATED"],
      "key with scope": [401, "UNAUTHENTICATED"],
      "secret key": [200, "allowed"],
      "replaced secret key": [401, "UNAUTHENTICATED"],
      "Starter plan's secret key": [200, "FEATURE_LOCKED"]
    }
    const failures: Array<string> = []
    for (const [credential, [status, code]] of Object.entries(expected)) {
      const raw = credentials[credential]
      const res = await call("POST", "/api/v1/graphql", raw === undefined ? undefined : `Bearer ${raw}`, { query: "{ me { account_id } }" })
      const got = res.body.errors?.[0]?.extensions?.code ?? (res.body.data?.me ? "allowed" : `status ${res.status}`)
      if (got !== code || res.status !== status) failures.push(`${credential}: expected ${status} ${code}, got ${res.status} ${got}`)
    }
    expect(failures).toEqual([])
  })
})

describe("rules beyond one route's role", () => {
  const codeOf = (res: { status: number; body: any }) => (AUTH_CODES.has(res.body.code) ? res.body.code : res.status === 404 ? "not_found" : res.status < 500 ? "allowed" : `status ${res.status}`)

  it("an invitation is answered by its invitee only: every other credential gets 401, 403 or 404, the invitee 200", async () => {
    // other@matrix.io is a person already (the other account's owner): adding them invites them.
    const invite = async () => {
      const r = await call("POST", "/api/v1/rcs/team", credentials.owner, { email: "other@matrix.io", role: "viewer", assigned_bots: ["*"] })
      expect(r.body).toMatchObject({ success: true, status: "invited" })
      return r.body.member_id as string
    }
    const want = (credential: string) =>
      ["no credential", "expired JWT", "tampered JWT", "alg none"].includes(credential) ? "unauthorized"
      : ["revoked key", "expired key"].includes(credential) ? "invalid_api_key"
      : credential.startsWith("key ") ? "api_key_endpoint_not_allowed"
      : "not_found"
    const failures: Array<string> = []
    for (const answer of ["decline", "accept"]) {
      const memberId = await invite()
      for (const credential of CREDENTIALS.filter((c) => c !== "other account's JWT")) {
        const res = await call("POST", `/api/v1/rcs/team/invitations/${memberId}/${answer}`, credentials[credential])
        if (codeOf(res) !== want(credential)) failures.push(`${answer}, ${credential}: expected ${want(credential)}, got ${res.status} ${JSON.stringify(res.body).slice(0, 100)}`)
      }
      const own = await call("POST", `/api/v1/rcs/team/invitations/${memberId}/${answer}`, credentials["other account's JWT"])
      if (own.status !== 200) failures.push(`${answer}, the invitee: ${own.status} ${JSON.stringify(own.body).slice(0, 100)}`)
    }
    expect(failures).toEqual([])
  })

  it("the developer webhook is the owner's on every RCS webhook route: members get 403 forbidden, keys 403, the owner is allowed", async () => {
    const put = await call("PUT", "/api/v1/app/developer/webhook", credentials.owner, { url: "https://example.com/developer-matrix" })
    expect(put.status).toBe(200)
    const developer = put.body.webhook_id as string
    const dead = "wd_00000000-0000-4000-8000-0000000000dd"
    await putDeadLetter(db, dead, developer)
    const routes: ReadonlyArray<[string, string, unknown?]> = [
      ["PATCH", `/api/v1/rcs/webhooks/${developer}`, { active: true }],
      ["POST", `/api/v1/rcs/webhooks/${developer}/rotate-secret`],
      ["POST", `/api/v1/rcs/webhooks/${developer}/test`],
      ["GET", `/api/v1/rcs/webhooks/${developer}/deliveries`],
      ["POST", `/api/v1/rcs/webhooks/dead-letter/${dead}/replay`],
      ["DELETE", `/api/v1/rcs/webhooks/${developer}`]
    ]
    const want = (credential: string) =>
      ["no credential", "expired JWT", "tampered JWT", "alg none"].includes(credential) ? "unauthorized"
      : ["revoked key", "expired key"].includes(credential) ? "invalid_api_key"
      : credential.startsWith("key ") ? "api_key_endpoint_not_allowed"
      : credential === "other account's JWT" ? "not_found"
      : credential === "owner" ? "allowed"
      : "forbidden"
    const failures: Array<string> = []
    for (const [method, path, body] of routes) {
      for (const credential of [...CREDENTIALS.filter((c) => c !== "owner"), "owner"]) {
        const res = await call(method, path, credentials[credential], body)
        if (codeOf(res) !== want(credential)) failures.push(`${method} ${path}, ${credential}: expected ${want(credential)}, got ${res.status} ${JSON.stringify(res.body).slice(0, 100)}`)
      }
    }
    expect(failures).toEqual([])
  })

  it("the developer webhook is listed to the owner's session only", async () => {
    const put = await call("PUT", "/api/v1/app/developer/webhook", credentials.owner, { url: "https://example.com/developer-listed" })
    const developer = put.body.webhook_id as string
    const listed = async (credential: string) => ((await call("GET", "/api/v1/rcs/webhooks", credentials[credential])).body.webhooks ?? []).map((w: any) => w.webhook_id)
    expect(await listed("owner")).toContain(developer)
    for (const credential of ["viewer", "operator", "key with scope"]) expect(await listed(credential), credential).not.toContain(developer)
  })

  it("an Idempotency-Key is the principal's: the owner's key sent by a viewer or an operator is their own 403, never the owner's answer", async () => {
    const send = (token: string | undefined, path: string, body?: unknown) =>
      fetch(`${node.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "idempotency-key": `matrix-${path}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body)
      }).then(async (r) => ({ status: r.status, text: await r.text() }))
    const routes: ReadonlyArray<[string, unknown?]> = [["/api/v1/app/developer/secret-key"], ["/api/v1/rcs/api-keys", { name: "replayed", scopes: ["contacts:read"] }]]
    for (const [path, body] of routes) {
      const owners = await send(credentials.owner, path, body)
      expect(owners.status, path).toBe(200)
      for (const credential of ["viewer", "operator"]) {
        const replayed = await send(credentials[credential], path, body)
        expect([replayed.status, JSON.parse(replayed.text).code], `${path}, ${credential}`).toEqual([403, "forbidden"])
        expect(replayed.text).not.toMatch(/sk_live_|rcs_pk_live_/)
      }
    }
  })
})
