import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { randomBytes } from "node:crypto"
import * as OTPAuth from "otpauth"
import { putDeadLetter } from "../support/deadLetters.ts"
import { useDb, useIsolation } from "../support/e2e.ts"
import {
  EDGE_DATES,
  encodeJson,
  EXTRA_HEADERS,
  fieldValues,
  FOREIGN_UUID,
  getAt,
  HOSTILE_CONTENT_TYPES,
  HOSTILE_CSV,
  HOSTILE_CURSORS,
  HOSTILE_PATH_VALUES,
  HOSTILE_QUERY_VALUES,
  HOSTILE_VALUES,
  type JsonPath,
  objectPaths,
  plausible,
  rawRequest,
  removeAt,
  resolveRef,
  setAt,
  UNKNOWN_KEYS,
  valuePaths,
  WHOLE_BODIES
} from "../support/fuzz.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { openSealed } from "../support/sealed.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// Hostile input, black box: every operation of Herald's own OpenAPI document (fetched from the
// running node) gets requests generated with fast-check. Each starts from a good request (fixture
// ids in the path, good query values, a hand-written body or one made from the request body
// schema; the public WhatsApp API with the secret key as Basic, a number, an open 24-hour window
// and approved templates; the partner e-mail API with a partner's key as Bearer, a verified
// domain to send from and to, a configuration set, templates and a suppressed address) and gets
// one to three faults: a hostile field value (wrong type, 1 MB, NUL, lone surrogate, edge dates
// and numbers, foreign ids), a removed or unknown field, a body that is not JSON, nests 10,000
// deep or is cut short, a wrong content type, a chunked body, hostile path and query values
// (cursors, dates, limits), odd credentials or headers. Answers must hold:
//   (a) never 5xx;
//   (b) a 4xx is `{success:false, code:<snake_case>, message:<string>}`;
//   (c) a 4xx wrote nothing: AFTER triggers (installed in beforeAll) record each change of the
//       tables only client requests write into `fuzz_writes`; its max(id) must not move;
//   (d) a send answered 200, or whose answer names a message_id, has that row in `messages`; a
//       WhatsApp send answered 2xx gets its row in `wa_messages` (its sender actor inserts it after
//       the 202), a partner's e-mail send answered 2xx its row in `email_messages` (its mailer
//       actor's, after the 202 too), and a WhatsApp template answered 2xx gets Meta's review (the
//       simulator's webhook), each within 10 s and awaited, so that no later request sees them as
//       its own writes;
//   (e) an answer comes within 30 s.
// Requests go one at a time. Every distinct failure (operation + kind + status + code) is kept;
// the first of each is then replayed from its fast-check seed and path and shrunk to a minimal
// request, and all are listed. A second test sends raw requests over a socket that fetch cannot:
// bodies shorter than their Content-Length or never-ending chunks (408, nothing written, the
// secret key not rotated) and requests Node's HTTP parser refuses (a 4xx with the envelope).
//
// Settings (environment):
//   FUZZ_RUNS  generated requests per operation (default 20: ~2,600 requests over the 132
//              operations, a minute or two of fuzzing on a 2-core machine beside the suite's other
//              files; each run draws a new seed, so the suite's runs together cover far more);
//   FUZZ_SEED  the base seed (printed with every failure; each operation's seed derives from it);
//   FUZZ_ONLY  run only operations whose "METHOD /path" contains this text.

const RUNS = Number(process.env.FUZZ_RUNS ?? 20)
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : randomBytes(4).readInt32LE(0)
const ONLY = process.env.FUZZ_ONLY
const REQUEST_TIMEOUT_MS = 30_000
/** Requests spent shrinking one distinct failure (a hang: 2), how many are shrunk, and for how long. */
const SHRINK_BUDGET = 40
const SHRINK_GROUPS = 30
const SHRINK_MS = 300_000
/** An operation that left this many requests unanswered gets no more. */
const MAX_HANGS = 3

const PHONE = "+919876541234"
const USERS = {
  owner: { email: "owner@fuzz.io", password: "owner password" },
  // Only for login fuzzing: a locked-out e-mail must never be one the test signs in with.
  login: { email: "login@fuzz.io", password: "login password" },
  // Has two accounts, so its login answers a session token for select-account.
  multi: { email: "multi@fuzz.io", password: "multi password" },
  // A member whose password the fuzz changes (restored after each change).
  pw: { email: "pw@fuzz.io", password: "pw password" },
  // A member whose 2FA the fuzz sets up, enables and disables.
  tfa: { email: "tfa@fuzz.io", password: "tfa password" },
  // The member PATCH targets, and a person added and removed for DELETE.
  target: { email: "target@fuzz.io", password: "target password" },
  spare: { email: "spare@fuzz.io", password: "spare password" }
} as const

const iso = useIsolation()
const db = useDb(iso)
// The simulator reviews a WhatsApp template 50 ms after it is submitted (the fuzz waits for it after a 201).
const env = envFor(iso, {
  GATEWAY_TIMEOUT_MS: "2000",
  GATEWAY_SIM_TEMPLATE_REVIEW_MS: "50",
  HERALD_HTTP_BODY_IDLE_MS: "1000",
  HERALD_IMPORT_IDLE_MS: "1000",
  HERALD_EMAIL_RETRY_BASE_MS: "200",
  LOG_LEVEL: "warning"
})
const cli = cliFor(env)
let node: HeraldProcess
let openapi: Record<string, any>

const fx = {
  account: "",
  bot: "",
  foreignBot: "",
  pendingBot: "",
  deletedTemplate: "",
  deletedList: "",
  template: "",
  list: "",
  webhook: "",
  rule: "",
  broadcast: "",
  message: "",
  member: "",
  patchKey: "",
  delivery: "wd_00000000-0000-4000-8000-00000000f022",
  apiKey: "",
  secretKey: "",
  /** The account's secret key before the one in use: regenerated, so revoked. */
  revokedSecretKey: "",
  /** The secret key of another account (the login user's), which has a WhatsApp number of its own. */
  foreignSecretKey: "",
  /** The account's WhatsApp number (its default sender) and another account's. */
  waNumber: "",
  secondWaNumber: "",
  foreignWaNumber: "",
  /** The account's APPROVED WhatsApp templates (the sends' fixtures) and a PENDING, a REJECTED, a deleted one. */
  waTemplate: "",
  waRichTemplate: "",
  deletedWaTemplate: "",
  /** A WhatsApp template of another account. */
  foreignWaTemplate: "",
  owner: "",
  pw: "",
  tfa: "",
  /** The partner e-mail API: the partner's key, and another partner's (whose daily quota is used up). */
  partnerKey: "",
  foreignPartnerKey: "",
  partnerId: "",
  foreignPartnerId: "",
  /** The partner's verified domain identity (EMAIL.domain), another partner's pending one. */
  emailIdentity: "",
  foreignIdentity: "",
  /** A message the partner sent (its row recorded), and one of the other partner. */
  emailMessage: "",
  foreignEmailMessage: "",
  /** A next_cursor of the partner's suppression list, and of the other partner's. */
  suppressionCursor: "",
  foreignSuppressionCursor: "",
  /** An event destination of another partner's configuration set. */
  foreignDestination: "",
  /** A verification token already used. */
  usedVerifyToken: "",
  session: { token: "", at: 0 },
  pwRow: { password_hash: "", tokens_valid_after: null as unknown }
}

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)
const unique = () => randomBytes(5).toString("hex")
const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString()

const login = async (email: string, password: string) => {
  const r = await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password })
  if (r.body.token) return r.body.token as string
  const chosen = await call("POST", "/api/v1/rcs/auth/select-account", undefined, { session_token: r.body.session_token, account_id: fx.account })
  if (!chosen.body.token) throw new Error(`cannot sign in ${email}: ${JSON.stringify(r.body)} ${JSON.stringify(chosen.body)}`)
  return chosen.body.token as string
}

const must = async (what: string, r: Promise<{ status: number; body: any }>, status = 200) => {
  const answer = await r
  if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `check` until it holds or `ms` pass; answers whether it held. */
const until = async (check: () => Promise<boolean>, ms = 10_000) => {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await sleep(20)
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The public API's credential: the secret key as Basic. */
const basic = () => `Basic ${fx.secretKey}`

/** WhatsApp template names of the fixtures (the public API's sends name a template by name and language). */
const WA = { template: "fuzz_order", rich: "fuzz_rich", pending: "fuzz_pending", rejected: "fuzz_rejected", deleted: "fuzz_deleted", foreign: "fuzz_foreign" } as const
const WA_BODY = { type: "BODY", text: "Hello {{1}}, your order {{2}} is on its way to you today", example: { body_text: [["Asha", "A-1"]] } }
const waTextTemplate = (name: string) => ({ name, language: "en", category: "UTILITY", components: [WA_BODY] })
/** A text header, a body, a footer and quick-reply and dynamic URL buttons: a send of it takes header, body and button values. */
const waRichTemplate = (name: string) => ({
  name,
  language: "en",
  category: "UTILITY",
  components: [
    { type: "HEADER", format: "TEXT", text: "Order {{1}}", example: { header_text: ["A-1"] } },
    { type: "BODY", text: "Hello {{1}}, your order is on its way to you today", example: { body_text: [["Asha"]] } },
    { type: "FOOTER", text: "Fuzz Ltd" },
    { type: "BUTTONS", buttons: [{ type: "QUICK_REPLY", text: "Thanks" }, { type: "URL", text: "Track", url: "https://example.com/track/{{1}}", example: ["https://example.com/track/A-1"] }] }
  ]
})

/**
 * Whether Meta's review of a WhatsApp template (the simulator's, by signed webhook, some 50 ms
 * after the submission) has been applied: then no write of it can land during a later request.
 */
const reviewed = (templateId: string) =>
  until(async () =>
    UUID.test(templateId) &&
    (await db<{ ok: boolean }>(
      `SELECT t.status <> 'PENDING' AND EXISTS (SELECT 1 FROM wa_template_reviews r WHERE r.upstream_id = t.upstream_id) AS ok
       FROM wa_templates t WHERE t.template_id = $1::uuid`,
      [templateId]
    ))[0]?.ok === true
  )

/** A WhatsApp template of the account, made through the API and reviewed (APPROVED, or REJECTED if its name says so). */
const makeWaTemplate = async (body: unknown) => {
  // The simulator compiles Meta's OpenAPI document on its first check (seconds, on the node's own
  // event loop): the first submission may outlast GATEWAY_TIMEOUT_MS and be answered 503.
  let answer = await call("POST", "/api/v1/public/templates", basic(), body)
  for (let i = 0; i < 3 && answer.status === 503; i++) answer = await call("POST", "/api/v1/public/templates", basic(), body)
  const id = (await must("WhatsApp template", Promise.resolve(answer), 201)).template.id as string
  if (!(await reviewed(id))) throw new Error(`WhatsApp template ${id} was not reviewed within 10 s`)
  return id
}

/** The account's developer webhook (the WhatsApp events' endpoint): made again when a DELETE removed it. */
const ensureDeveloperWebhook = async () => {
  const rows = await db("SELECT 1 FROM webhooks WHERE account_id = $1 AND channel = 'whatsapp' AND deleted_at IS NULL", [fx.account])
  if (rows.length === 0) await must("developer webhook", call("PUT", "/api/v1/app/developer/webhook", fx.owner, { url: "https://example.com/developer" }))
}

/**
 * The partner e-mail API's fixtures, the same for both partners: a verified domain (every address
 * at it is a verified sender and, in the sandbox, a verified recipient), a configuration set and a
 * template of one name (the path's `{name}`), a template the sends use (PUT never touches it), a
 * suppressed address (the path's `{email}`); the other partner also has a set and a template of a
 * name only it has.
 */
const EMAIL = {
  domain: "fuzz.test",
  sender: "sender@fuzz.test",
  recipient: "ann@fuzz.test",
  suppressed: "suppressed@fuzz.test",
  foreignSuppressed: "foreign-suppressed@fuzz.test",
  name: "fuzz-set",
  sendTemplate: "fuzz-send",
  foreignName: "fuzz-foreign"
} as const
const PARTNER = "/api/v1/partner/email"
const partnerCall = (method: string, path: string, key: string, body?: unknown) => call(method, `${PARTNER}${path}`, key, body)

/** The mail the in-process SMTP sink received for an address (through the gateway simulator's control route). */
const sinkMessages = async (to: string) =>
  ((await (await fetch(`http://127.0.0.1:${env.GATEWAY_SIM_PORT}/simulate/smtp/messages?to=${encodeURIComponent(to)}`)).json()) as { messages: Array<{ text: string | null }> }).messages

/** The token of a fresh address identity's verification link (the mail the sink received): unused, so GET /verify takes it once. */
const makeVerifyToken = async () => {
  const address = `v${unique()}@${EMAIL.domain}`
  await must("address identity", partnerCall("POST", "/identities", fx.partnerKey, { identity: address }))
  let token: string | undefined
  await until(async () => {
    token = /[?&]token=([^\s&]+)/.exec((await sinkMessages(address))[0]?.text ?? "")?.[1]
    return token !== undefined
  })
  if (token === undefined) throw new Error(`no verification mail for ${address} within 10 s`)
  return decodeURIComponent(token)
}

/** Whether a message the partner API accepted has its row (its mailer inserts it after the 202). */
const emailRecorded = async (id: unknown) =>
  typeof id === "string" && UUID.test(id) && (await until(async () => (await db("SELECT 1 FROM email_messages WHERE message_id = $1::uuid", [id])).length > 0))

/** A live event destination of the partner's standing configuration set, if it has one. */
const liveDestination = async () =>
  (await db<{ id: string }>(
    `SELECT w.webhook_id::text AS id FROM webhooks w JOIN email_configuration_sets s USING (config_set_id)
     WHERE s.partner_id = $1 AND s.name = $2 AND w.channel = 'email' AND w.deleted_at IS NULL ORDER BY w.created_at LIMIT 1`,
    [fx.partnerId, EMAIL.name]
  ))[0]?.id

/** The standing set gets a destination again when a PATCH left it none (the PATCH's good body keeps one by its id). */
const ensureDestination = async () => {
  if ((await liveDestination()) !== undefined) return
  await must("destination", partnerCall("PATCH", `/configuration-sets/${EMAIL.name}`, fx.partnerKey, { event_destinations: [{ url: "https://example.com/hook", events: ["SEND", "DELIVERY"] }] }))
}

// Objects the destructive operations consume: one at a time, made again once consumed.
type FreshKind =
  | "template"
  | "list"
  | "webhook"
  | "rule"
  | "broadcast"
  | "key"
  | "member"
  | "waTemplate"
  // The partner e-mail API's (a verification token is consumed by GET /verify).
  | "emailIdentity"
  | "configSet"
  | "emailTemplate"
  | "suppressed"
  | "verifyToken"
const MAKE: Record<FreshKind, () => Promise<string>> = {
  emailIdentity: async () => (await must("identity", partnerCall("POST", "/identities", fx.partnerKey, { identity: `d${unique()}.${EMAIL.domain}` }))).id,
  configSet: async () =>
    (await must("configuration set", partnerCall("POST", "/configuration-sets", fx.partnerKey, { name: `fz-${unique()}`, event_destinations: [{ url: "https://example.com/hook", events: ["SEND"] }] })))
      .name,
  emailTemplate: async () => (await must("e-mail template", partnerCall("POST", "/templates", fx.partnerKey, { name: `fz-${unique()}`, subject: "Hi", text: "Hi" }))).name,
  suppressed: async () => (await must("suppression", partnerCall("PUT", `/suppression/gone${unique()}@${EMAIL.domain}`, fx.partnerKey, {}))).email,
  verifyToken: makeVerifyToken,
  waTemplate: () => makeWaTemplate(waTextTemplate(`fuzz_${unique()}`)),
  template: async () => (await must("template", call("POST", "/api/v1/rcs/templates", fx.owner, { bot_id: fx.bot, name: `fuzz ${unique()}`, type: "text", text: "Hello" }))).template_id,
  list: async () => (await must("list", call("POST", "/api/v1/rcs/contact-lists", fx.owner, { name: `fuzz ${unique()}` }))).list.list_id,
  webhook: async () => (await must("webhook", call("POST", "/api/v1/rcs/webhooks", fx.owner, { url: "https://example.com/hook", events: ["message.sent"], bot_id: fx.bot }))).webhook_id,
  rule: async () => (await must("rule", call("POST", `/api/v1/rcs/auto-replies/${fx.bot}`, fx.owner, { match: "exact", keyword: `k${unique()}`, reply: { text: "Hi" } }))).rule.rule_id,
  broadcast: async () =>
    (await must("broadcast", call("POST", "/api/v1/rcs/broadcasts", fx.owner, { name: "fuzz", bot_id: fx.bot, template_id: fx.template, contact_list_id: fx.list, scheduled_at: tomorrow() }))).broadcast.id,
  key: async () => (await must("key", call("POST", "/api/v1/rcs/api-keys", fx.owner, { name: "throwaway", scopes: ["contacts:read"] }))).key_id,
  member: async () => {
    // The spare person has a Herald user: invited (an invitation is a member the owner may change or remove).
    const r = await call("POST", "/api/v1/rcs/team", fx.owner, { email: USERS.spare.email, role: "viewer", assigned_bots: ["*"] })
    if (r.status === 200) return r.body.member_id
    const [row] = await db<{ member_id: string }>(
      "SELECT m.member_id::text FROM memberships m JOIN users u USING (user_id) WHERE u.email = $1 AND m.account_id = $2",
      [USERS.spare.email, fx.account]
    )
    if (!row) throw new Error(`cannot add the spare member: ${r.status} ${JSON.stringify(r.body)}`)
    return row.member_id
  }
}
const freshIds = new Map<FreshKind, string>()
const fresh = async (kind: FreshKind) => {
  let id = freshIds.get(kind)
  if (id === undefined) {
    id = await MAKE[kind]()
    freshIds.set(kind, id)
  }
  return id
}

const totp = async (email: string) => {
  const [row] = await db<{ totp_secret: string | null }>("SELECT totp_secret FROM users WHERE email = $1", [email])
  if (!row?.totp_secret) return "000000"
  return OTPAuth.TOTP.generate({ algorithm: "SHA1", digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(openSealed(row.totp_secret)) })
}

const sessionToken = async () => {
  if (Date.now() - fx.session.at > 60_000) {
    const r = await call("POST", "/api/v1/rcs/auth/login", undefined, USERS.multi)
    fx.session = { token: String(r.body.session_token ?? ""), at: Date.now() }
  }
  return fx.session.token
}

/** What a `$name` in a body, query or path stands for, worked out when the request is sent. */
const PLACEHOLDERS: Record<string, () => unknown> = {
  $bot: () => fx.bot,
  $upperBot: () => fx.bot.toUpperCase(),
  $paddedBot: () => ` ${fx.bot} `,
  $foreignBot: () => fx.foreignBot,
  $pendingBot: () => fx.pendingBot,
  $deletedTemplate: () => fx.deletedTemplate,
  $deletedList: () => fx.deletedList,
  $ownerJwt: () => fx.owner,
  $apiKeyRaw: () => fx.apiKey,
  $secretKeyRaw: () => fx.secretKey,
  $upperSpareEmail: () => USERS.spare.email.toUpperCase(),
  $template: () => fx.template,
  $list: () => fx.list,
  $webhook: () => fx.webhook,
  $broadcast: () => fx.broadcast,
  $message: () => fx.message,
  $account: () => fx.account,
  $tomorrow: tomorrow,
  $yesterday: () => new Date(Date.now() - 86_400_000).toISOString(),
  $name: () => `fuzz ${unique()}`,
  // WhatsApp template names: lowercase letters, digits and underscores; Meta (the simulator) rejects a name with "reject".
  $waName: () => `fuzz_${unique()}`,
  $waRejectName: () => `fuzz_reject_${unique()}`,
  $waTemplate: () => fx.waTemplate,
  $waTemplateName: () => WA.template,
  $waRichTemplateName: () => WA.rich,
  $pendingWaTemplateName: () => WA.pending,
  $rejectedWaTemplateName: () => WA.rejected,
  $deletedWaTemplateName: () => WA.deleted,
  $foreignWaTemplateName: () => WA.foreign,
  $deletedWaTemplate: () => fx.deletedWaTemplate,
  $foreignWaTemplate: () => fx.foreignWaTemplate,
  $waNumber: () => fx.waNumber,
  $foreignWaNumber: () => fx.foreignWaNumber,
  $secondWaNumber: () => fx.secondWaNumber,
  $email: () => `m${unique()}@fuzz.io`,
  $loginEmail: () => USERS.login.email,
  $loginPassword: () => USERS.login.password,
  $session: sessionToken,
  $pwPassword: () => USERS.pw.password,
  $tfaPassword: () => USERS.tfa.password,
  $totp: () => totp(USERS.tfa.email),
  // The partner e-mail API.
  $partnerName: () => `fz-${unique()}`,
  $freshDomain: () => `d${unique()}.${EMAIL.domain}`,
  $freshAddress: () => `v${unique()}@${EMAIL.domain}`,
  // The SMTP sink refuses mail to bounce…@ for good (550) and to soft…@ for now (451): the verification mail is not delivered.
  $bounceAddress: () => `bounce${unique()}@${EMAIL.domain}`,
  $softAddress: () => `soft${unique()}@${EMAIL.domain}`,
  $verifyToken: () => fresh("verifyToken"),
  $partnerKeyRaw: () => fx.partnerKey,
  $usedVerifyToken: () => fx.usedVerifyToken,
  $destination: async () => (await liveDestination()) ?? FOREIGN_UUID,
  $upperDestination: async () => ((await liveDestination()) ?? FOREIGN_UUID).toUpperCase(),
  $foreignDestination: () => fx.foreignDestination,
  $emailIdentity: () => fx.emailIdentity,
  $foreignIdentity: () => fx.foreignIdentity,
  $emailMessage: () => fx.emailMessage,
  $upperEmailMessage: () => fx.emailMessage.toUpperCase(),
  $foreignEmailMessage: () => fx.foreignEmailMessage,
  $suppressionCursor: () => fx.suppressionCursor,
  $foreignSuppressionCursor: () => fx.foreignSuppressionCursor,
  // The signature's first character changed.
  $editedSuppressionCursor: () => fx.suppressionCursor.replace(/\.(.)/, (_, c: string) => `.${c === "A" ? "B" : "A"}`)
}

const resolve = async (value: unknown): Promise<unknown> => {
  if (typeof value === "string" && Object.hasOwn(PLACEHOLDERS, value)) return await PLACEHOLDERS[value]!()
  if (Array.isArray(value)) return Promise.all(value.map(resolve))
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    // fromEntries, not assignment: a "__proto__" key stays a key.
    return Object.fromEntries(await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await resolve(v)] as const)))
  }
  return value
}

/** A good value for a body property by its name, where the schema alone would give "x". */
const NAMED: Record<string, unknown> = {
  bot_id: "$bot",
  template_id: "$template",
  contact_list_id: "$list",
  list_id: "$list",
  account_id: "$account",
  email: "$email",
  scheduled_at: "$tomorrow",
  expires_at: "$tomorrow",
  url: "https://example.com/hook",
  to: PHONE,
  phone: PHONE,
  session_token: "$session",
  name: "$name",
  keyword: "$name",
  fullPhoneNumber: PHONE,
  callbackData: "cb",
  fromPhoneNumberId: "$waNumber"
}

const SUGGESTION = { type: "reply", text: "Yes", postback_data: "yes" }
const CARD = { title: "Card", description: "A card", media: { url: "https://example.com/a.png", height: "medium" }, suggestions: [SUGGESTION] }

/** Known-good bodies (alternatives), so that mutations start from requests that reach deep. */
const GOOD: Record<string, ReadonlyArray<unknown>> = {
  "POST /api/v1/rcs/auth/login": [{ email: "$loginEmail", password: "$loginPassword" }],
  "POST /api/v1/rcs/auth/select-account": [{ session_token: "$session", account_id: "$account" }],
  "POST /api/v1/rcs/auth/password": [{ current_password: "$pwPassword", new_password: "fuzz new password" }],
  "POST /api/v1/rcs/auth/2fa/enable": [{ totp_code: "$totp" }],
  "POST /api/v1/rcs/auth/2fa/disable": [{ password: "$tfaPassword", totp_code: "$totp" }],
  "POST /api/v1/rcs/api-keys": [{ name: "$name", scopes: ["contacts:read", "templates:read"], expires_at: "$tomorrow" }],
  "PATCH /api/v1/rcs/api-keys/{key_id}": [{ name: "$name" }, { expires_at: "$tomorrow" }],
  "POST /api/v1/rcs/team": [{ email: "$email", role: "viewer", assigned_bots: ["*"], password: "member password" }],
  "PATCH /api/v1/rcs/team/{member_id}": [{ role: "viewer", assigned_bots: ["$bot"] }],
  "POST /api/v1/rcs/webhooks": [{ url: "https://example.com/hook", events: ["message.sent", "message.failed"], bot_id: "$bot" }],
  "PATCH /api/v1/rcs/webhooks/{webhook_id}": [{ active: true, events: ["message.sent"], url: "https://example.com/hook2" }],
  "POST /api/v1/rcs/apply": [{ bot_name: "Fuzz", company_name: "Fuzz Ltd", company_gstin: "27AAPFU0939F1ZV", brand_website: "https://fuzz.example.com", use_case: "promotional" }],
  "POST /api/v1/rcs/templates": [
    { bot_id: "$bot", name: "$name", type: "text", text: "Hello", suggestions: [SUGGESTION] },
    { bot_id: "$bot", name: "$name", type: "rich_card", rich_card: CARD },
    { bot_id: "$bot", name: "$name", type: "carousel", carousel: { cards: [CARD, { title: "Second" }] } }
  ],
  "POST /api/v1/rcs/messages/send": [
    { bot_id: "$bot", to: PHONE, text: "hello" },
    { bot_id: "$bot", to: PHONE, template_id: "$template" },
    { bot_id: "$bot", to: PHONE, rich_card: { title: "Card", description: "A card", suggestions: [SUGGESTION] } },
    { bot_id: "$bot", to: PHONE, carousel: { cards: [{ title: "One" }, { title: "Two" }] }, suggestions: [SUGGESTION] }
  ],
  "POST /api/v1/rcs/auto-replies/{bot_id}": [
    { match: "exact", keyword: "$name", reply: { text: "Hello" }, cooldown_seconds: 60 },
    { match: "contains", keyword: "$name", reply: { template_id: "$template" } }
  ],
  "PATCH /api/v1/rcs/auto-replies/{bot_id}/{rule_id}": [{ active: true, keyword: "$name", cooldown_seconds: 0 }],
  "POST /api/v1/rcs/contact-lists": [{ name: "$name" }],
  "POST /api/v1/rcs/contact-lists/{list_id}/contacts": [{ contacts: [{ phone: PHONE, name: "A", params: { city: "Pune" } }, { phone: "+919876541235" }] }],
  "POST /api/v1/rcs/broadcasts": [{ name: "fuzz", bot_id: "$bot", template_id: "$template", contact_list_id: "$list", scheduled_at: "$tomorrow" }],
  // PHONE's 24-hour window is open (beforeAll), so free-form types reach the sender too.
  "POST /api/v1/public/message": [
    { fullPhoneNumber: PHONE.slice(1), callbackData: "cb", type: "Text", data: { message: "hello" } },
    { fullPhoneNumber: PHONE, type: "Image", data: { mediaUrl: "https://example.com/a.png", message: "a caption" } },
    { fullPhoneNumber: PHONE.slice(1), type: "Document", data: { mediaUrl: "https://example.com/invoice.pdf", fileName: "invoice.pdf", message: "your invoice" }, fromPhoneNumberId: "$waNumber" },
    {
      fullPhoneNumber: PHONE.slice(1),
      type: "InteractiveButton",
      data: { message: "Shall we deliver today?", header: "Delivery", footer: "Fuzz Ltd", buttons: [{ id: "yes", title: "Yes" }, { id: "no", title: "No" }] }
    },
    {
      fullPhoneNumber: PHONE.slice(1),
      type: "InteractiveList",
      data: {
        message: "Pick a slot",
        button: "Slots",
        header: "Delivery",
        sections: [{ title: "Today", rows: [{ id: "t1", title: "Evening", description: "6 to 9 pm" }] }, { title: "Tomorrow", rows: [{ id: "m1", title: "Morning" }] }]
      }
    },
    { fullPhoneNumber: PHONE.slice(1), callbackData: "cb", type: "Template", data: { name: "$waTemplateName", languageCode: "en", bodyValues: ["Asha", "A-1"] } },
    { fullPhoneNumber: PHONE, type: "Template", data: { name: "$waRichTemplateName", languageCode: "en", headerValues: ["A-1"], bodyValues: ["Asha"], buttonValues: { "1": ["A-1"] } } }
  ],
  "POST /api/v1/public/templates": [
    { name: "$waName", language: "en", category: "UTILITY", components: [WA_BODY] },
    {
      name: "$waName",
      language: "en_US",
      category: "MARKETING",
      components: [
        { type: "HEADER", format: "TEXT", text: "Offer {{1}}", example: { header_text: ["SALE"] } },
        { type: "BODY", text: "Hello {{1}}, our new season sale starts today for you", example: { body_text: [["Asha"]] } },
        { type: "FOOTER", text: "Reply STOP to opt out" },
        {
          type: "BUTTONS",
          buttons: [
            { type: "QUICK_REPLY", text: "Yes" },
            { type: "URL", text: "Shop", url: "https://example.com/shop/{{1}}", example: ["https://example.com/shop/sale"] },
            { type: "PHONE_NUMBER", text: "Call us", phone_number: "+919876541234" }
          ]
        }
      ]
    },
    {
      name: "$waName",
      language: "en",
      category: "AUTHENTICATION",
      components: [{ type: "BODY", add_security_recommendation: true }, { type: "FOOTER", code_expiration_minutes: 10 }, { type: "BUTTONS", buttons: [{ type: "OTP", otp_type: "COPY_CODE", text: "Copy code" }] }]
    },
    {
      name: "$waName",
      language: "hi",
      category: "MARKETING",
      components: [
        { type: "HEADER", format: "IMAGE", example: { header_handle: ["4::aW1hZ2UvcG5n:ARb"] } },
        { type: "BODY", text: "Our new collection is here for you to see today" },
        { type: "BUTTONS", buttons: [{ type: "COPY_CODE", example: "SAVE20" }] }
      ]
    },
    {
      name: "$waName",
      language: "en",
      category: "MARKETING",
      components: [
        { type: "BODY", text: "Pick the plan that suits you best this season" },
        {
          type: "CAROUSEL",
          cards: [1, 2].map((n) => ({
            components: [
              { type: "HEADER", format: "IMAGE", example: { header_handle: [`4::card${n}`] } },
              { type: "BODY", text: `Plan number ${n}` },
              { type: "BUTTONS", buttons: [{ type: "QUICK_REPLY", text: `Pick ${n}` }] }
            ]
          }))
        }
      ]
    },
    {
      name: "$waName",
      language: "en",
      category: "UTILITY",
      components: [{ type: "BODY", text: "Your order is ready, please review and pay for it" }, { type: "BUTTONS", buttons: [{ type: "ORDER_DETAILS", text: "Review and Pay" }] }]
    }
  ],
  "PUT /api/v1/app/developer/webhook": [{ url: "https://example.com/developer" }],
  "PUT /api/v1/app/meta-ads/capi/config": [{ dataset_id: "1234567890", access_token: "EAAB-fuzz-token" }],
  "POST /api/v1/app/meta-ads/capi/events": [{ event_name: "Purchase", event_id: "$name", fullPhoneNumber: PHONE, email: "a@example.com", value: 10, currency: "INR" }],
  "POST /api/v1/app/meta-ads/capi/events/batch": [{ events: [{ event_name: "Lead", fullPhoneNumber: PHONE }] }],
  "POST /api/v1/public/track/users": [{ fullPhoneNumber: PHONE, name: "A", traits: { city: "Pune", orders: 3, gone: null }, tags: ["vip"] }],
  "POST /api/v1/public/customers/search": [{ filters: [{ trait: "city", op: "eq", value: "Pune" }, { trait: "orders", op: "gte", value: 1 }], tags: ["vip"], limit: 10 }],
  "POST /api/v1/public/chats/assign": [{ fullPhoneNumber: PHONE, agentEmail: "" }],
  // The partner e-mail API: senders and recipients at the verified domain, names the fixtures hold.
  "POST /api/v1/partner/email/identities": [{ identity: "$freshDomain" }, { identity: "$freshAddress" }],
  "POST /api/v1/partner/email/configuration-sets": [
    { name: "$partnerName", event_destinations: [{ url: "https://example.com/hook", events: ["SEND", "DELIVERY", "BOUNCE"] }] },
    { name: "$partnerName" }
  ],
  "PATCH /api/v1/partner/email/configuration-sets/{name}": [
    { event_destinations: [{ destination_id: "$destination", url: "https://example.com/hook", events: ["SEND", "DELIVERY"] }] },
    { event_destinations: [{ destination_id: "$destination", url: "https://example.com/hook", events: ["SEND"] }, { url: "https://example.com/hook2", events: ["COMPLAINT"] }] },
    { event_destinations: [{ url: "https://example.com/hook", events: ["SEND", "DELIVERY"] }] }
  ],
  "POST /api/v1/partner/email/templates": [
    { name: "$partnerName", subject: "Hello {{name}}", html: "<p>Hello {{name}}</p>", text: "Hello {{name}}" },
    { name: "$partnerName", subject: "Plain", text: "Plain text" }
  ],
  "PUT /api/v1/partner/email/templates/{name}": [{ subject: "Hello {{name}}", html: "<p>Hello {{name}}</p>", text: "Hello {{name}}" }, { subject: "Hi {{name}}", html: "<b>{{name}}</b>" }],
  "PUT /api/v1/partner/email/suppression/{email}": [{ reason: "MANUAL" }, {}],
  "POST /api/v1/partner/email/emails": [
    { from: EMAIL.sender, to: [EMAIL.recipient], subject: "Hello", text: "Hi Ann" },
    {
      from: EMAIL.sender,
      to: [EMAIL.recipient, "bo@fuzz.test"],
      cc: ["cc@fuzz.test"],
      bcc: ["bcc@fuzz.test"],
      reply_to: "reply@fuzz.test",
      subject: "Hello",
      text: "Hi",
      html: "<p>Hi</p>",
      configuration_set: EMAIL.name,
      tags: { campaign: "fuzz" }
    },
    { from: EMAIL.sender, to: [EMAIL.recipient], reply_to: ["reply@fuzz.test"], template: { name: EMAIL.sendTemplate, data: { name: "Asha" } }, configuration_set: EMAIL.name }
  ],
  "POST /api/v1/partner/email/production-access": [{ mail_type: "TRANSACTIONAL", website_url: "https://fuzz.example.com", use_case_description: "Receipts for orders placed in our shop" }]
}

/**
 * Values aimed at one operation's field (its dotted path), besides those aimed by the field's name
 * (fuzz.ts): the names of the WhatsApp templates that cannot be sent (pending, rejected, deleted,
 * another account's), a taken name, numbers of the account and of another.
 */
const AIMED: Record<string, ReadonlyArray<readonly [string, ReadonlyArray<unknown>]>> = {
  "POST /api/v1/public/message": [
    [
      "data.name",
      ["$waTemplateName", "$waRichTemplateName", "$pendingWaTemplateName", "$rejectedWaTemplateName", "$deletedWaTemplateName", "$foreignWaTemplateName", "FUZZ_ORDER", "fuzz_order ", "fuzz_order\u0000"]
    ],
    ["data.languageCode", ["en_US", "hi", "EN", "en ", "xx"]],
    // The second number has no open window: a free-form send from it is 422.
    ["fromPhoneNumberId", ["$waNumber", "$secondWaNumber", "$secondWaNumber", "$foreignWaNumber", "", " ", "$waNumber "]],
    // Whose window is closed (0001 and 0006 fail upstream, 14155550100 is American), the business number itself.
    ["fullPhoneNumber", [PHONE.slice(1), "+919876540001", "919876540006", "+14155550100", "+919800000001", "+919876541235", "00919876541234", "+919876541234\n"]]
  ],
  "POST /api/v1/public/templates": [
    ["name", ["$waTemplateName", "$waRejectName", "$waName", "$deletedWaTemplateName", "FUZZ_ORDER", "fuzz order", "fuzz-order"]],
    ["category", ["MARKETING", "AUTHENTICATION", "utility", "SERVICE"]],
    ["language", ["en_US", "en-US", "xx", "EN"]]
  ],
  // The partner e-mail API: unverified, suppressed and odd addresses, too many recipients, names
  // another partner has, placeholders a template cannot fill, header injection.
  "POST /api/v1/partner/email/emails": [
    ["from", [EMAIL.sender, "SENDER@FUZZ.TEST", " sender@fuzz.test ", "sender@unverified.test", "sender@sub.fuzz.test", "Sender <sender@fuzz.test>", "sender@fuzz.test\r\nBcc: x@evil.test", "sender@fuzz.test.", "no-reply@herald.local"]],
    [
      "to",
      [
        [EMAIL.suppressed],
        [EMAIL.suppressed, EMAIL.recipient],
        ["a@unverified.test"],
        [],
        Array.from({ length: 50 }, (_, i) => `r${i}@fuzz.test`),
        Array.from({ length: 51 }, (_, i) => `r${i}@fuzz.test`),
        [EMAIL.recipient, "ANN@FUZZ.TEST"],
        ["ann@fuzz.test, bo@fuzz.test"],
        EMAIL.recipient
      ]
    ],
    ["to.0", [EMAIL.suppressed, EMAIL.foreignSuppressed, "a@unverified.test", "ann@fuzz.test\r\nBcc: x@evil.test", "ann@FUZZ.test", "\"ann\"@fuzz.test", "ann@fuzz.test."]],
    ["cc", [[EMAIL.suppressed], ["a@unverified.test"], Array.from({ length: 50 }, (_, i) => `c${i}@fuzz.test`)]],
    ["reply_to", [[], "not an address", ["a@unverified.test"], Array.from({ length: 51 }, (_, i) => `r${i}@x.test`)]],
    ["subject", ["", "   ", "a".repeat(998), "a".repeat(999), "Hello\r\nBcc: x@evil.test", "=?utf-8?B?SGk=?="]],
    ["configuration_set", [EMAIL.name, EMAIL.foreignName, "nope", "FUZZ-SET", "fuzz set", ""]],
    ["template.name", [EMAIL.sendTemplate, EMAIL.name, EMAIL.foreignName, "nope", "FUZZ-SEND", ""]],
    ["template.data", [{}, { name: 1 }, { name: null }, { name: { a: 1 } }, { name: ["a"] }, { name: "<script>alert(1)</script>" }, { name: "{{name}}" }, { other: "x" }]],
    ["tags", [{}, { k: "" }, { ["k".repeat(257)]: "v" }, { k: "v".repeat(257) }, { k: 1 }, Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`k${i}`, "v"]))]]
  ],
  "POST /api/v1/partner/email/identities": [
    [
      "identity",
      [
        EMAIL.domain,
        "FUZZ.TEST",
        "fuzz.test.",
        EMAIL.sender,
        "$bounceAddress",
        "$softAddress",
        "localhost",
        "127.0.0.1",
        "xn--80ak6aa92e.com",
        "a..b.test",
        "-a.test",
        "a".repeat(64) + ".test",
        "@fuzz.test",
        "a@b@fuzz.test",
        "user@[127.0.0.1]"
      ]
    ]
  ],
  "POST /api/v1/partner/email/configuration-sets": [
    ["name", [EMAIL.name, EMAIL.foreignName, "FUZZ-SET", "a".repeat(64), "a".repeat(65), "fuzz set", "fuzz.set", ""]],
    [
      "event_destinations",
      [
        [],
        Array.from({ length: 10 }, () => ({ url: "https://example.com/hook", events: ["SEND"] })),
        Array.from({ length: 11 }, () => ({ url: "https://example.com/hook", events: ["SEND"] })),
        [{ url: "https://example.com/hook", events: [] }],
        [{ destination_id: "$destination", url: "https://example.com/hook", events: ["SEND"] }]
      ]
    ],
    ["event_destinations.0.events", [["SEND", "SEND"], ["send"], ["OPEN"], ["SEND", "DELIVERY", "BOUNCE", "COMPLAINT", "REJECT", "SUPPRESSED"], []]]
  ],
  "PATCH /api/v1/partner/email/configuration-sets/{name}": [
    [
      "event_destinations",
      [
        [],
        Array.from({ length: 11 }, () => ({ url: "https://example.com/hook", events: ["SEND"] })),
        [{ destination_id: "$destination", url: "https://example.com/hook", events: ["SEND"] }, { destination_id: "$upperDestination", url: "https://example.com/hook", events: ["SEND"] }]
      ]
    ],
    ["event_destinations.0.destination_id", ["$foreignDestination", "$upperDestination", "$emailIdentity", FOREIGN_UUID, ""]],
    ["event_destinations.0.events", [["SEND", "SEND"], ["send"], ["OPEN"], []]]
  ],
  "POST /api/v1/partner/email/templates": [
    ["name", [EMAIL.name, EMAIL.sendTemplate, EMAIL.foreignName, "a".repeat(65), "fuzz set", ""]],
    ["subject", ["", " ", "{{", "{{}}", "{{ name", "{{name}", "a".repeat(998), "a".repeat(999), "Hi\r\nBcc: x@evil.test", "{{#each x}}{{/each}}", "{{constructor}}", "{{__proto__}}"]],
    ["html", ["", "{{", "<script>{{name}}</script>", "{{{name}}}"]]
  ],
  "PUT /api/v1/partner/email/templates/{name}": [
    ["subject", ["", " ", "{{", "{{}}", "a".repeat(999), "Hi\r\nBcc: x@evil.test", "{{constructor}}", "{{__proto__}}"]],
    ["html", ["", "{{", "{{{name}}}"]]
  ],
  "PUT /api/v1/partner/email/suppression/{email}": [["reason", ["BOUNCE", "COMPLAINT", "MANUAL", "manual", "", null]]],
  "POST /api/v1/partner/email/production-access": [
    ["mail_type", ["MARKETING", "marketing", "PROMOTIONAL", ""]],
    ["website_url", ["https://fuzz.example.com", "fuzz.example.com", "javascript:alert(1)", "http://", "https://" + "a".repeat(2041)]],
    ["use_case_description", [" ", "a".repeat(5_000), "a".repeat(5_001), "a\u0000b"]]
  ]
}
const aimedAt = (op: Op, path: JsonPath): ReadonlyArray<unknown> => (AIMED[op.key] ?? []).find(([at]) => at === path.join("."))?.[1] ?? []

/** Valid query values by parameter name (placeholders allowed); cursors have none. */
const GOOD_QUERY: Record<string, string> = {
  limit: "5",
  bot_id: "$bot",
  from: "$yesterday",
  to: "$tomorrow",
  can_broadcast: "true",
  message_id: "$emailMessage",
  token: "$verifyToken"
}

type Credential =
  | "natural"
  | "none"
  | "owner"
  | "apiKey"
  | "secretKey"
  | "session"
  | "garbage"
  | "huge"
  | "basic"
  | "lowercase"
  | "bare"
  | "tampered"
  // Secret-key operations: the key in another form, another account's, revoked, altered.
  | "encodedKey"
  | "encodedBareKey"
  | "paddedKey"
  | "foreignKey"
  | "revokedKey"
  | "tamperedKey"
  // The public API: other credentials under its scheme.
  | "basicOwner"
  | "basicApiKey"
  | "basicTwice"
  // The partner e-mail API's key on any other operation; on its own operations another partner's
  // key (whose daily quota is used up), the key altered or padded.
  | "partnerKey"
  | "foreignPartnerKey"
  | "tamperedPartnerKey"
  | "paddedPartnerKey"

interface Op {
  readonly key: string
  readonly method: string
  readonly template: string
  readonly pathParams: ReadonlyArray<string>
  /** A required parameter is always sent (a good value unless a fault replaces or omits it). */
  readonly query: ReadonlyArray<{ readonly name: string; readonly schema: Record<string, any>; readonly required: boolean }>
  readonly contentTypes: ReadonlyArray<string>
  readonly goodBodies: ReadonlyArray<unknown>
  readonly fullBody: unknown
}

type Mutation =
  | { readonly kind: "replace"; readonly path: JsonPath; readonly value: unknown }
  | { readonly kind: "remove"; readonly path: JsonPath }
  | { readonly kind: "unknown"; readonly at: JsonPath; readonly key: string; readonly value: unknown }
  | { readonly kind: "optional"; readonly path: JsonPath }

/** One hostile change to a known-good request. */
type Fault =
  | { readonly kind: "mutation"; readonly mutation: Mutation }
  /** The whole body replaced (null: no body at all). */
  | { readonly kind: "body"; readonly body: string | Buffer | null }
  /** The JSON text cut at this fraction of its length. */
  | { readonly kind: "cut"; readonly at: number }
  | { readonly kind: "contentType"; readonly type: string | null }
  /** A CSV body (Content-Type text/csv), for the imports that take one. */
  | { readonly kind: "csv"; readonly body: string | Buffer }
  /** The body sent as a stream (Transfer-Encoding: chunked, no Content-Length). */
  | { readonly kind: "chunked" }
  | { readonly kind: "auth"; readonly credential: Credential }
  | { readonly kind: "path"; readonly name: string; readonly value: string }
  | { readonly kind: "query"; readonly name: string; readonly value: string }
  | { readonly kind: "headers"; readonly headers: Readonly<Record<string, string>> }

interface Spec {
  /** Which known-good body the request starts from. */
  readonly alternative: number
  /** Optional query parameters sent with good values. */
  readonly query: ReadonlyArray<string>
  /** One to three hostile changes: most requests are valid but for one thing, so they get deep. */
  readonly faults: ReadonlyArray<Fault>
}

const operations = (doc: Record<string, any>): Array<Op> => {
  const ops: Array<Op> = []
  for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue
      const params = [...(item.parameters ?? []), ...(operation.parameters ?? [])] as Array<Record<string, any>>
      const content = (operation.requestBody?.content ?? {}) as Record<string, { schema?: Record<string, any> }>
      const key = `${method.toUpperCase()} ${template}`
      const schema = content["application/json"]?.schema
      const named = (name: string) => NAMED[name]
      const generated = schema ? plausible(doc, schema, named) : undefined
      ops.push({
        key,
        method: method.toUpperCase(),
        template,
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
        query: params.filter((p) => p.in === "query").map((p) => ({ name: p.name, schema: resolveRef(doc, p.schema), required: p.required === true })),
        contentTypes: Object.keys(content),
        goodBodies: GOOD[key] ?? (generated !== undefined ? [generated] : []),
        fullBody: schema ? plausible(doc, schema, named, { full: true }) : undefined
      })
    }
  }
  return ops
}

/** The public messaging API: the secret key as `Authorization: Basic` (the Meta webhook beside it is off the document). */
const isPublicApi = (op: Op) => op.template.startsWith("/api/v1/public/")

/** The partner e-mail API: a partner's key as Bearer, but for the verification link, which needs none. */
const isPartnerApi = (op: Op) => op.template.startsWith(`${PARTNER}/`) && op.template !== `${PARTNER}/verify`

/** The /api/v1/app operations of the secret key (the rest of /api/v1/app is a signed-in owner's). */
const SECRET_KEY_APP = /^\/api\/v1\/app\/(me|meta-ads\/capi\/events(\/.*)?|integrations\/logs)$/

/** The credential an operation is meant to be called with (the public API's goes as Basic, every other as Bearer). */
const naturalCredential = (op: Op): string | undefined => {
  if (op.template.startsWith("/health") || op.template === "/api/v1/rcs/auth/login" || op.template === "/api/v1/rcs/auth/select-account") return undefined
  if (op.template === `${PARTNER}/verify`) return undefined
  if (isPartnerApi(op)) return fx.partnerKey
  if (SECRET_KEY_APP.test(op.template) || isPublicApi(op)) return fx.secretKey
  if (op.template === "/api/v1/rcs/auth/password") return fx.pw
  if (op.template.startsWith("/api/v1/rcs/auth/2fa")) return fx.tfa
  return fx.owner
}

/** Authorization header value and how it is shown in a report. */
const authorization = (op: Op, credential: Credential): { header?: string; shown?: string } => {
  const natural = naturalCredential(op)
  const scheme = isPublicApi(op) ? "Basic" : "Bearer"
  const bearer = (token: string | undefined, name: string) => (token === undefined ? {} : { header: `Bearer ${token}`, shown: `Bearer <${name}>` })
  const own = (token: string, name: string) => ({ header: `${scheme} ${token}`, shown: `${scheme} <${name}>` })
  const b64 = (text: string) => Buffer.from(text).toString("base64")
  switch (credential) {
    case "natural":
      return natural === undefined
        ? {}
        : own(
          natural,
          natural === fx.secretKey ? "secret key" : natural === fx.partnerKey ? "partner key" : natural === fx.pw ? "pw member JWT" : natural === fx.tfa ? "2fa member JWT" : "owner JWT"
        )
    case "none":
      return {}
    case "owner":
      return bearer(fx.owner, "owner JWT")
    case "apiKey":
      return bearer(fx.apiKey, "API key with every scope")
    case "secretKey":
      return bearer(fx.secretKey, "secret key")
    case "session":
      return bearer(fx.session.token || undefined, "a session token of select-account")
    case "garbage":
      return { header: "Bearer garbage", shown: "Bearer garbage" }
    case "huge":
      return { header: `Bearer ${"a".repeat(10_000)}`, shown: "Bearer <10,000 × a>" }
    case "basic":
      return { header: "Basic Zm9vOmJhcg==", shown: "Basic Zm9vOmJhcg==" }
    case "lowercase":
      return natural === undefined ? {} : { header: `${scheme.toLowerCase()} ${natural}`, shown: `${scheme.toLowerCase()} <natural credential>` }
    case "bare":
      return natural === undefined ? {} : { header: natural, shown: "<natural credential, no scheme>" }
    case "tampered": {
      const [h, , s] = fx.owner.split(".")
      const payload = Buffer.from(JSON.stringify({ sub: FOREIGN_UUID, aid: FOREIGN_UUID, role: "owner", exp: 9_999_999_999 })).toString("base64url")
      return { header: `Bearer ${h}.${payload}.${s}`, shown: "Bearer <owner JWT, payload replaced>" }
    }
    case "encodedKey":
      return { header: `${scheme} ${b64(`${fx.secretKey}:`)}`, shown: `${scheme} base64(<secret key>:)` }
    case "encodedBareKey":
      return { header: `${scheme} ${b64(fx.secretKey)}`, shown: `${scheme} base64(<secret key>)` }
    case "paddedKey":
      return { header: `${scheme}   ${fx.secretKey}  `, shown: `${scheme}   <secret key>  ` }
    case "foreignKey":
      return own(fx.foreignSecretKey, "another account's secret key")
    case "revokedKey":
      return own(fx.revokedSecretKey, "revoked secret key")
    case "tamperedKey": {
      const last = fx.secretKey.at(-1) === "A" ? "B" : "A"
      return own(`${fx.secretKey.slice(0, -1)}${last}`, "secret key, last character changed")
    }
    case "basicOwner":
      return { header: `Basic ${fx.owner}`, shown: "Basic <owner JWT>" }
    case "basicApiKey":
      return { header: `Basic ${fx.apiKey}`, shown: "Basic <API key with every scope>" }
    case "basicTwice":
      return { header: `Basic ${fx.secretKey}, Basic ${fx.secretKey}`, shown: "Basic <secret key>, Basic <secret key>" }
    case "partnerKey":
      return bearer(fx.partnerKey, "partner key")
    case "foreignPartnerKey":
      return own(fx.foreignPartnerKey, "another partner's key")
    case "tamperedPartnerKey": {
      const last = fx.partnerKey.at(-1) === "A" ? "B" : "A"
      return own(`${fx.partnerKey.slice(0, -1)}${last}`, "partner key, last character changed")
    }
    case "paddedPartnerKey":
      return { header: `${scheme}   ${fx.partnerKey}  `, shown: `${scheme}   <partner key>  ` }
  }
}

const mutate = (op: Op, body: unknown, mutation: Mutation): unknown => {
  switch (mutation.kind) {
    case "replace":
      return setAt(body, mutation.path, mutation.value)
    case "remove":
      return removeAt(body, mutation.path)
    case "unknown": {
      const at = getAt(body, mutation.at)
      return setAt(body, mutation.at, { ...(at !== null && typeof at === "object" && !Array.isArray(at) ? at : {}), [mutation.key]: mutation.value })
    }
    case "optional":
      return setAt(body, mutation.path, getAt(op.fullBody, mutation.path))
  }
}

const mutationArbitrary = (op: Op, good: unknown): fc.Arbitrary<Mutation> | undefined => {
  const paths = valuePaths(good)
  const objects = objectPaths(good)
  if (objects.length === 0) return undefined
  const present = new Set(paths.map((p) => JSON.stringify(p)))
  const optional = valuePaths(op.fullBody).filter((p) => !present.has(JSON.stringify(p)) && p.length <= 3)
  const anyValue = fc.constantFrom(...HOSTILE_VALUES)
  const mutations: Array<fc.WeightedArbitrary<Mutation>> = [
    {
      arbitrary: fc.record({ kind: fc.constant("unknown" as const), at: fc.constantFrom(...objects), key: fc.constantFrom(...UNKNOWN_KEYS), value: fc.constantFrom(...HOSTILE_VALUES) }),
      weight: 1
    }
  ]
  if (paths.length > 0) {
    // A field with the values aimed at its name (most of the time), else any hostile value.
    const replace = fc.constantFrom(...paths).chain((path) => {
      const aimed = [...aimedAt(op, path), ...fieldValues(path)]
      const value = aimed.length === 0 ? anyValue : fc.oneof({ arbitrary: fc.constantFrom(...aimed), weight: 3 }, { arbitrary: anyValue, weight: 2 })
      return value.map((v): Mutation => ({ kind: "replace", path, value: v }))
    })
    mutations.unshift({ arbitrary: replace, weight: 6 }, { arbitrary: fc.record({ kind: fc.constant("remove" as const), path: fc.constantFrom(...paths) }), weight: 1 })
  }
  if (optional.length > 0) mutations.push({ arbitrary: fc.record({ kind: fc.constant("optional" as const), path: fc.constantFrom(...optional) }), weight: 1 })
  // The operation's own aimed fields, often: each value there is plausible, so the request reaches
  // the checks behind validation (a closed window, a template that cannot be sent, a taken name).
  const targeted = (AIMED[op.key] ?? []).map(([at, values]) => [at.split("."), values] as const).filter(([path]) => path.length === 1 || present.has(JSON.stringify(path)))
  if (targeted.length > 0) {
    const aimed = fc.constantFrom(...targeted).chain(([path, values]) => fc.constantFrom(...values).map((value): Mutation => ({ kind: "replace", path, value })))
    mutations.push({ arbitrary: aimed, weight: 4 })
  }
  return fc.oneof(...mutations)
}

/** A query fault value that leaves a required parameter out. */
const OMIT = "$omit"

const hostileQueryValues = (name: string, required: boolean): ReadonlyArray<string> => [
  ...(required ? [OMIT] : []),
  ...(name === "status" || name === "category"
    ? ["approved", "APPROVED", "REJECTED", "UTILITY", "AUTHENTICATION", "DELETED", "APPROVED%20", "APPROVED,PENDING", ...HOSTILE_QUERY_VALUES]
    : name === "bot_id"
    ? ["$upperBot", "$foreignBot", "$pendingBot", ...HOSTILE_QUERY_VALUES]
    : name === "cursor"
    ? HOSTILE_CURSORS
    // The partner lists' signed cursors: one of another list or partner, one edited, then nonsense.
    : name === "next_cursor"
    ? ["$suppressionCursor", "$foreignSuppressionCursor", "$editedSuppressionCursor", ...HOSTILE_CURSORS]
    : name === "message_id"
    ? ["$foreignEmailMessage", "$upperEmailMessage", "$emailIdentity", ...HOSTILE_QUERY_VALUES]
    : name === "type"
    ? ["send", "DELIVERY", "OPEN", "SEND,DELIVERY", "SEND%00", "SEND%20", ...HOSTILE_QUERY_VALUES]
    : name === "token"
    ? ["$usedVerifyToken", "$partnerKeyRaw", ...HOSTILE_QUERY_VALUES]
    : name === "from" || name === "to"
    ? [...EDGE_DATES.map(encodeURIComponent), ...HOSTILE_QUERY_VALUES]
    : HOSTILE_QUERY_VALUES)
]

/** Query parameters no operation declares. */
const UNKNOWN_QUERY: ReadonlyArray<string> = ["zz_unknown", "%00", "limit[]", "__proto__", "a".repeat(1_000)]

const specArbitrary = (op: Op): fc.Arbitrary<Spec> => {
  const natural = naturalCredential(op)
  const credentials: Array<Credential> = ["none", "apiKey", "session", "garbage", "huge", "basic", "tampered"]
  if (natural !== undefined) credentials.push("lowercase", "bare")
  // Another partner's key reaches as deep as the natural one (its sends stop at its used-up quota).
  if (natural === fx.partnerKey) credentials.push("foreignPartnerKey", "foreignPartnerKey", "foreignPartnerKey", "tamperedPartnerKey", "paddedPartnerKey")
  else credentials.push("partnerKey")
  if (natural !== fx.owner && !op.template.startsWith("/api/v1/rcs/auth/")) credentials.push("owner")
  if (natural !== fx.secretKey || isPublicApi(op)) credentials.push("secretKey")
  // The key in its other accepted forms and another account's key (whose wallet is empty) reach as deep as the natural one.
  if (natural === fx.secretKey) credentials.push("encodedKey", "encodedBareKey", "paddedKey", "foreignKey", "foreignKey", "foreignKey", "revokedKey", "tamperedKey")
  if (isPublicApi(op)) credentials.push("basicOwner", "basicApiKey", "basicTwice")
  const common: Array<fc.WeightedArbitrary<Fault>> = [
    { arbitrary: fc.constantFrom(...credentials).map((credential): Fault => ({ kind: "auth", credential })), weight: natural === fx.secretKey || natural === fx.partnerKey ? 4 : 2 },
    { arbitrary: fc.constantFrom(...EXTRA_HEADERS).map((headers): Fault => ({ kind: "headers", headers })), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant("query" as const), name: fc.constantFrom(...UNKNOWN_QUERY), value: fc.constantFrom("1", "%00", "x") }), weight: 1 }
  ]
  if (op.pathParams.length > 0) {
    const path = fc.constantFrom(...op.pathParams).chain((name) =>
      fc.constantFrom(...HOSTILE_PATH_VALUES, ...PATH_VARIANTS, ...(PATH_OBJECTS[`${op.template} ${name}`] ?? [])).map((value): Fault => ({ kind: "path", name, value }))
    )
    common.push({ arbitrary: path, weight: 4 })
  }
  if (op.query.length > 0) {
    const query = fc.constantFrom(...op.query).chain(({ name, required }) => fc.constantFrom(...hostileQueryValues(name, required)).map((value): Fault => ({ kind: "query", name, value })))
    common.push({ arbitrary: query, weight: 6 })
  }
  const bodyless = op.method === "GET" ? [] : [{ arbitrary: fc.constantFrom<string | Buffer | null>(...WHOLE_BODIES, null).map((body): Fault => ({ kind: "body", body })), weight: 2 }]
  const goodQuery = fc.subarray(op.query.filter((q) => !q.required && q.name !== "cursor" && q.name !== "next_cursor").map((q) => q.name))
  const specs = (op.goodBodies.length === 0 ? [undefined] : op.goodBodies).map((good, alternative) => {
    const faults = [...common, ...bodyless]
    const mutation = good === undefined ? undefined : mutationArbitrary(op, good)
    if (good !== undefined) {
      if (mutation) faults.push({ arbitrary: mutation.map((m): Fault => ({ kind: "mutation", mutation: m })), weight: 16 })
      faults.push(
        { arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((at): Fault => ({ kind: "cut", at })), weight: 1 },
        { arbitrary: fc.constantFrom(...op.contentTypes.slice(1), ...HOSTILE_CONTENT_TYPES).map((type): Fault => ({ kind: "contentType", type })), weight: 2 },
        { arbitrary: fc.constant<Fault>({ kind: "chunked" }), weight: 1 }
      )
      if (op.contentTypes.includes("text/csv")) faults.push({ arbitrary: fc.constantFrom(...HOSTILE_CSV).map((body): Fault => ({ kind: "csv", body })), weight: 3 })
    }
    const fault = fc.oneof(...faults)
    return fc.record({
      alternative: fc.constant(alternative),
      query: goodQuery,
      faults: fc.tuple(fault, fc.option(fault, { freq: 2 }), fc.option(fault, { freq: 6 })).map(([a, b, c]) => [a, ...(b ? [b] : []), ...(c ? [c] : [])])
    })
  })
  return fc.oneof(...specs)
}

/** Path values made from the fixture a parameter names: upper case, with a suffix, padded. */
const PATH_VARIANTS = ["$upper", "$suffixed", "$padded"]
const variant = (value: string, fixture: string) =>
  value === "$upper" ? encodeURIComponent(fixture.toUpperCase()) : value === "$suffixed" ? `${encodeURIComponent(fixture)}x` : value === "$padded" ? `%20${encodeURIComponent(fixture)}%20` : value

/** Other objects a path parameter may name instead of its fixture (placeholders): gone, another account's, of another kind. */
const PATH_OBJECTS: Record<string, ReadonlyArray<string>> = {
  "/api/v1/public/templates/{id} id": ["$deletedWaTemplate", "$foreignWaTemplate", "$template", "$message"],
  // The partner e-mail API: another partner's objects, another kind's ids, names a set or template cannot have.
  "/api/v1/partner/email/identities/{id} id": ["$foreignIdentity", "$emailMessage", "$bot"],
  "/api/v1/partner/email/configuration-sets/{name} name": [EMAIL.foreignName, EMAIL.sendTemplate, "a".repeat(65), "fuzz%20set", "fuzz-set%00"],
  "/api/v1/partner/email/templates/{name} name": [EMAIL.foreignName, "a".repeat(65), "fuzz%20set"],
  "/api/v1/partner/email/suppression/{email} email": [EMAIL.foreignSuppressed, "not-an-address", "a%40b", "%40fuzz.test", "a%40b%40fuzz.test"],
  "/api/v1/partner/email/emails/{message_id} message_id": ["$foreignEmailMessage", "$message", "$emailIdentity"]
}

const FRESH_OF: Record<string, FreshKind> = { template_id: "template", list_id: "list", webhook_id: "webhook", rule_id: "rule", key_id: "key", member_id: "member" }

/**
 * The kind of throwaway object a destructive operation's path parameter takes (`id` names a
 * broadcast, a WhatsApp template or a partner's identity, `name` a configuration set or an e-mail
 * template, by path).
 */
const freshKindOf = (op: Op, name: string): FreshKind | undefined =>
  op.template.startsWith(`${PARTNER}/`)
    ? name === "id"
      ? "emailIdentity"
      : name === "name"
      ? op.template.startsWith(`${PARTNER}/templates/`) ? "emailTemplate" : "configSet"
      : name === "email"
      ? "suppressed"
      : undefined
    : name !== "id"
    ? FRESH_OF[name]
    : op.template.startsWith("/api/v1/rcs/broadcasts/")
    ? "broadcast"
    : op.template.startsWith("/api/v1/public/templates/")
    ? "waTemplate"
    : undefined

/** The standing fixture each path parameter names (`id` is a broadcast's, a WhatsApp template's or a message's, by path). */
const STANDING: Record<string, () => string> = {
  bot_id: () => fx.bot,
  template_id: () => fx.template,
  list_id: () => fx.list,
  webhook_id: () => fx.webhook,
  rule_id: () => fx.rule,
  key_id: () => fx.patchKey,
  member_id: () => fx.member,
  delivery_id: () => fx.delivery,
  phone: () => PHONE,
  // The partner e-mail API's (`{name}` is a configuration set's and a template's).
  name: () => EMAIL.name,
  email: () => EMAIL.suppressed,
  message_id: () => fx.emailMessage
}

/** The fixture a path parameter names; destructive operations get a throwaway object. */
const pathFixture = async (op: Op, name: string): Promise<string> => {
  const destroys = op.method === "DELETE" || op.template.endsWith("/cancel")
  const kind = freshKindOf(op, name)
  if (destroys && kind !== undefined) return fresh(kind)
  if (name === "id") return kind === "broadcast" ? fx.broadcast : kind === "waTemplate" ? fx.waTemplate : kind === "emailIdentity" ? fx.emailIdentity : fx.message
  return STANDING[name]?.() ?? "x"
}

interface Built {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly shownHeaders: Record<string, string>
  readonly body: Buffer | undefined
  readonly chunked: boolean
}

const build = async (op: Op, spec: Spec): Promise<Built> => {
  const faults = <K extends Fault["kind"]>(kind: K) => spec.faults.filter((f): f is Extract<Fault, { kind: K }> => f.kind === kind)
  let path = op.template
  for (const name of op.pathParams) {
    const given = faults("path").filter((f) => f.name === name).at(-1)?.value
    const fixture = given === undefined || PATH_VARIANTS.includes(given) ? await pathFixture(op, name) : ""
    const value = given === undefined
      ? encodeURIComponent(fixture)
      : Object.hasOwn(PLACEHOLDERS, given)
      ? encodeURIComponent(String(await resolve(given)))
      : variant(given, fixture)
    path = path.replace(`{${name}}`, value)
  }
  const query = new Map<string, string>()
  for (const name of [...op.query.filter((q) => q.required).map((q) => q.name), ...spec.query]) {
    const good = GOOD_QUERY[name] ?? op.query.find((q) => q.name === name)?.schema.enum?.[0] ?? ""
    query.set(name, encodeURIComponent(String(await resolve(good))))
  }
  for (const { name, value } of faults("query")) {
    if (value === OMIT) query.delete(name)
    else query.set(name, Object.hasOwn(PLACEHOLDERS, value) ? encodeURIComponent(String(await resolve(value))) : value)
  }
  const credential = faults("auth").at(-1)?.credential ?? "natural"
  const auth = authorization(op, credential)
  const extra = Object.assign({}, ...faults("headers").map((f) => f.headers)) as Record<string, string>
  const headers: Record<string, string> = { ...extra }
  const shownHeaders: Record<string, string> = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, v.length > 100 ? `<${v.length} chars>` : v]))
  if (auth.header !== undefined) {
    headers.authorization = auth.header
    shownHeaders.authorization = auth.shown ?? "?"
  }
  const typeFault = faults("contentType").at(-1)
  let contentType: string | null = typeFault ? typeFault.type : op.contentTypes[0] ?? "application/json"
  let body: Buffer | undefined
  const good = op.goodBodies[spec.alternative]
  if (good !== undefined && op.method !== "GET") {
    let value: unknown = good
    for (const { mutation } of faults("mutation")) value = mutate(op, value, mutation)
    value = await resolve(value)
    let text: string
    if (contentType === "application/x-ndjson") {
      const items = getAt(value, ["contacts"])
      text = Array.isArray(items) ? items.map(encodeJson).join("\n") + "\n" : encodeJson(value)
    } else {
      text = encodeJson(value)
    }
    for (const { at } of faults("cut")) text = text.slice(0, Math.floor(at * text.length))
    body = Buffer.from(text)
    const csv = faults("csv").at(-1)
    if (csv) {
      body = Buffer.isBuffer(csv.body) ? csv.body : Buffer.from(csv.body)
      contentType = "text/csv"
    }
  }
  const whole = faults("body").at(-1)
  if (whole) body = whole.body === null ? undefined : Buffer.isBuffer(whole.body) ? whole.body : Buffer.from(whole.body)
  if (body !== undefined && contentType?.startsWith("multipart/form-data")) body = Buffer.from("--")
  if (body !== undefined && contentType !== null) {
    headers["content-type"] = contentType
    shownHeaders["content-type"] = contentType
  }
  const chunked = faults("chunked").length > 0 && body !== undefined
  if (chunked) shownHeaders["transfer-encoding"] = "chunked"
  const search = [...query].map(([k, v]) => `${k}=${v}`).join("&")
  return { method: op.method, url: path + (search ? `?${search}` : ""), headers, shownHeaders, body, chunked }
}

interface Exchange {
  readonly request: Built
  readonly status: number
  readonly answer: string
  readonly ms: number
  readonly error?: string
  readonly note?: string
}

interface Failure {
  readonly key: string
  readonly exchange: Exchange
}

const writeMark = async () => Number((await db<{ m: string }>("SELECT coalesce(max(id), 0)::text AS m FROM fuzz_writes"))[0]!.m)

const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/

let requests = 0
const hangs = new Map<string, number>()
const coverage = new Map<string, Record<string, number>>()
/** What each operation's known-good requests were answered, unmutated. */
const baselines = new Map<string, Array<string>>()

/** Sends one generated request and checks (a)–(e); returns each failure with its group key. */
const probe = async (op: Op, spec: Spec, answered?: (status: number, code: string) => void): Promise<Array<Failure>> => {
  // Before the request: what it needs, so that none of these writes is counted against it.
  if (op.key === "POST /api/v1/rcs/auth/login") await db("DELETE FROM sign_in_attempts WHERE email = $1", [USERS.login.email])
  if (op.template.startsWith("/api/v1/rcs/auth/")) await db("DELETE FROM sign_in_attempts WHERE email = ANY($1)", [[USERS.pw.email, USERS.tfa.email, USERS.multi.email]])
  if (op.template.includes("{delivery_id}")) await ensureDeadLetter()
  if (op.template === "/api/v1/app/developer/webhook") await ensureDeveloperWebhook()
  if (op.key === `PATCH ${PARTNER}/configuration-sets/{name}`) await ensureDestination()
  // One request may be pending at a time: the partner's is withdrawn so that the next reaches the
  // insert (the other partner's stays pending: with its key, the request is 409).
  if (op.key === `POST ${PARTNER}/production-access`) await db("DELETE FROM email_production_access WHERE partner_id = $1 AND status = 'PENDING'", [fx.partnerId])
  const request = await build(op, spec)
  const before = await writeMark()
  requests++
  const started = Date.now()
  let status = 0
  let answer = ""
  let error: string | undefined
  try {
    const init: RequestInit = { method: request.method, headers: request.headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), redirect: "manual" }
    if (request.body !== undefined && request.chunked) {
      // Two pieces of a stream: sent chunked, without a Content-Length.
      const body = request.body
      const half = Math.floor(body.length / 2)
      init.body = new ReadableStream({
        start(controller) {
          controller.enqueue(new Uint8Array(body.subarray(0, half)))
          controller.enqueue(new Uint8Array(body.subarray(half)))
          controller.close()
        }
      })
      Object.assign(init, { duplex: "half" })
    } else if (request.body !== undefined) {
      init.body = request.body
    }
    const res = await fetch(node.url + request.url, init)
    status = res.status
    answer = await res.text()
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause
    error = (e as Error).name === "TimeoutError" ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` : `${(e as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ""}`
  }
  const ms = Date.now() - started
  const failures: Array<Failure> = []
  let parsed: any
  try {
    parsed = JSON.parse(answer)
  } catch {
    parsed = undefined
  }
  const code = typeof parsed?.code === "string" ? parsed.code : "-"
  answered?.(status, code)
  const tally = coverage.get(op.key) ?? {}
  const seen = status === 0 ? "error" : status < 300 ? `${status}` : `${status} ${code}`
  tally[seen] = (tally[seen] ?? 0) + 1
  coverage.set(op.key, tally)
  const exchange = (note?: string): Exchange => ({ request, status, answer, ms, ...(error ? { error } : {}), ...(note ? { note } : {}) })
  if (error !== undefined) {
    if (node.child.exitCode !== null || node.child.signalCode !== null) {
      throw new Error(`Herald exited (${node.child.exitCode ?? node.child.signalCode}) at this request:\n${show(exchange())}\n${node.output().slice(-3_000)}`)
    }
    hangs.set(op.key, (hangs.get(op.key) ?? 0) + 1)
    failures.push({ key: `${op.key} · (e) no answer: ${error.replace(/\d+/g, "N")}`, exchange: exchange() })
    return failures
  }
  if (status >= 500) failures.push({ key: `${op.key} · (a) ${status} ${code}`, exchange: exchange() })
  if (status >= 400 && status < 500) {
    const envelope = parsed !== null && typeof parsed === "object" && parsed.success === false && typeof parsed.code === "string" && SNAKE.test(parsed.code) && typeof parsed.message === "string"
    if (!envelope) failures.push({ key: `${op.key} · (b) ${status} answer not the error envelope`, exchange: exchange() })
    const after = await writeMark()
    if (after !== before) {
      const rows = await db<{ tbl: string; op: string; row: string }>("SELECT tbl, op, row FROM fuzz_writes WHERE id > $1 ORDER BY id LIMIT 20", [before])
      const tables = [...new Set(rows.map((r) => `${r.op} ${r.tbl}`))].sort().join(", ")
      failures.push({ key: `${op.key} · (c) ${status} ${code} but wrote ${tables}`, exchange: exchange(rows.slice(0, 3).map((r) => `${r.op} ${r.tbl} ${r.row}`).join("\n")) })
    }
  }
  if (op.key === "POST /api/v1/rcs/messages/send" && (status === 200 || (parsed && "message_id" in parsed))) {
    const id = parsed?.message_id
    const rows = typeof id === "string" ? await db("SELECT 1 FROM messages WHERE message_id::text = $1", [id]) : []
    if (rows.length === 0) {
      const what = typeof id === "string" ? `message ${status === 200 ? "sent" : code} without a row in messages` : "200 without a message_id"
      failures.push({ key: `${op.key} · (d) ${status} ${what}`, exchange: exchange() })
    }
  }
  // A WhatsApp send is recorded by its number's sender actor once JetStream has it, after the 202:
  // its row must come (and comes before the next request, which must not see it as its own write).
  // The app API's send-text goes the same way (its answer names the id `message_id`).
  if ((op.key === "POST /api/v1/public/message" || op.key === "POST /api/v1/app/messages/send-text") && status >= 200 && status < 300) {
    const id = op.key === "POST /api/v1/public/message" ? parsed?.id : parsed?.message_id
    const recorded = typeof id === "string" && UUID.test(id) && (await until(async () => (await db("SELECT 1 FROM wa_messages WHERE message_id = $1::uuid", [id])).length > 0))
    if (!recorded) {
      const what = typeof id === "string" ? "message queued without a row in wa_messages within 10 s" : `${status} without an id`
      failures.push({ key: `${op.key} · (d) ${status} ${what}`, exchange: exchange() })
    }
  }
  // A partner's send is recorded by its mailer actor after the 202, the same way.
  if (op.key === `POST ${PARTNER}/emails` && status >= 200 && status < 300) {
    const id = parsed?.message_id
    if (!(await emailRecorded(id))) {
      const what = typeof id === "string" ? "message accepted without a row in email_messages within 10 s" : `${status} without a message_id`
      failures.push({ key: `${op.key} · (d) ${status} ${what}`, exchange: exchange() })
    }
  }
  // A WhatsApp template is reviewed by Meta's webhook after its 201: that write, too, must land before the next request.
  if (op.key === "POST /api/v1/public/templates" && status >= 200 && status < 300) {
    const id = parsed?.template?.id
    if (typeof id !== "string" || !(await reviewed(id))) {
      failures.push({ key: `${op.key} · (d) ${status} template ${typeof id === "string" ? "not reviewed within 10 s" : "answered without template.id"}`, exchange: exchange() })
    }
  }
  // After a 2xx: put back what the request consumed or changed that later requests rely on.
  if (status >= 200 && status < 300) await after2xx(op, parsed)
  return failures
}

const after2xx = async (op: Op, body: any) => {
  for (const name of op.pathParams) {
    const kind = freshKindOf(op, name)
    if ((op.method === "DELETE" || op.template.endsWith("/cancel")) && kind !== undefined) freshIds.delete(kind)
  }
  // The verification token was used (whichever credential came with it).
  if (op.key === `GET ${PARTNER}/verify`) freshIds.delete("verifyToken")
  // Only the owner's account can get a 2xx here: its new key replaces the fixture.
  if (op.key === "POST /api/v1/app/developer/secret-key" && typeof body?.secret_key === "string") fx.secretKey = body.secret_key
  if (op.key === "POST /api/v1/rcs/auth/password") {
    // The pw member's password changed and its tokens were cut off: restore the row as it was.
    await db("UPDATE users SET password_hash = $1, tokens_valid_after = $2 WHERE email = $3", [fx.pwRow.password_hash, fx.pwRow.tokens_valid_after, USERS.pw.email])
    const deadline = Date.now() + 10_000
    while ((await call("GET", "/api/v1/rcs/team", fx.pw)).status === 401 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  }
}

const ensureDeadLetter = () => putDeadLetter(db, fx.delivery, fx.webhook)

// Tables only client requests write, and what of them: messages and broadcasts are INSERTed by
// the request (a single send's row before its answer), then UPDATEd by actors; dead letters are
// inserted by delivery actors and deleted by a replay.
const WATCHED: ReadonlyArray<readonly [string, string, string?]> = [
  ["accounts", "INSERT OR UPDATE OR DELETE"],
  ["users", "INSERT OR UPDATE OR DELETE"],
  ["memberships", "INSERT OR UPDATE OR DELETE"],
  ["user_recovery_codes", "INSERT OR UPDATE OR DELETE"],
  ["api_keys", "INSERT OR UPDATE OR DELETE"],
  ["bots", "INSERT OR UPDATE OR DELETE"],
  ["bot_identity_claims", "INSERT OR UPDATE OR DELETE"],
  ["templates", "INSERT OR UPDATE OR DELETE"],
  ["contact_lists", "INSERT OR UPDATE OR DELETE"],
  ["contacts", "INSERT OR UPDATE OR DELETE"],
  ["webhooks", "INSERT OR UPDATE OR DELETE"],
  ["auto_reply_rules", "INSERT OR UPDATE OR DELETE"],
  ["broadcasts", "INSERT"],
  ["messages", "INSERT", "NEW.source = 'api'"],
  ["webhook_dead_letters", "DELETE"],
  // WhatsApp: a send's row is inserted by its sender actor after the 202 (probe waits for it), then
  // moved by the actor and Meta's status webhooks; a template's review comes by Meta's webhook after
  // its 201 (probe waits for it too); customers and conversations are written only by Meta's
  // inbound webhooks, which no operation of the document is, and numbers only by the admin CLI.
  ["wa_messages", "INSERT"],
  ["wa_templates", "INSERT OR UPDATE OR DELETE"],
  ["wa_template_reviews", "INSERT OR UPDATE OR DELETE"],
  ["wa_numbers", "INSERT OR UPDATE OR DELETE"],
  ["customers", "INSERT OR UPDATE OR DELETE"],
  ["conversations", "INSERT OR UPDATE OR DELETE"],
  // The partner e-mail API: partners only by the admin CLI; a send's message row is inserted by the
  // partner's mailer actor after the 202 (probe waits for it), then moved by the mailer with its
  // recipients and events (not watched); hard bounces and complaints add suppression rows after the
  // relay (no generated address bounces or complains). Event destinations are rows of webhooks
  // (channel 'email'), watched above.
  ["partners", "INSERT OR UPDATE OR DELETE"],
  ["email_identities", "INSERT OR UPDATE OR DELETE"],
  ["email_configuration_sets", "INSERT OR UPDATE OR DELETE"],
  ["email_templates", "INSERT OR UPDATE OR DELETE"],
  ["email_suppression", "INSERT OR UPDATE OR DELETE"],
  ["email_production_access", "INSERT OR UPDATE OR DELETE"],
  ["email_messages", "INSERT"]
]

const installWriteTriggers = async () => {
  const tables = new Set((await db<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'")).map((r) => r.t))
  const missing = WATCHED.map(([t]) => t).filter((t) => !tables.has(t))
  if (missing.length > 0) throw new Error(`tables to watch not found: ${missing.join(", ")}`)
  await db(`CREATE TABLE fuzz_writes (id bigserial PRIMARY KEY, tbl text NOT NULL, op text NOT NULL, row text, at timestamptz NOT NULL DEFAULT clock_timestamp())`)
  await db(`
    CREATE FUNCTION fuzz_note_write() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE ignored text[] := ARRAY['last_used_at', 'updated_at', 'wallet_balance'];
    BEGIN
      IF TG_OP = 'UPDATE' AND (to_jsonb(OLD) - ignored) = (to_jsonb(NEW) - ignored) THEN RETURN NULL; END IF;
      INSERT INTO fuzz_writes (tbl, op, row)
      VALUES (TG_TABLE_NAME, TG_OP, left(CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END::text, 300));
      RETURN NULL;
    END $$`)
  for (const [table, events, when] of WATCHED) {
    await db(`CREATE TRIGGER fuzz_${table} AFTER ${events} ON ${table} FOR EACH ROW ${when ? `WHEN (${when}) ` : ""}EXECUTE FUNCTION fuzz_note_write()`)
  }
}

/**
 * The account's WhatsApp side: a number (its default sender), PHONE's 24-hour window open (an
 * inbound message through the simulator, so Herald's and the simulator's windows agree), the
 * developer webhook, APPROVED templates to send, and templates that cannot be sent (pending,
 * rejected, deleted); another account's number, template and secret key.
 */
const setUpWhatsApp = async (other: string) => {
  fx.waNumber = (await cli("admin", "create-wa-number", fx.account, "--phone", "+919800000001")).phone_number_id
  fx.secondWaNumber = (await cli("admin", "create-wa-number", fx.account, "--phone", "+919800000003")).phone_number_id
  fx.foreignWaNumber = (await cli("admin", "create-wa-number", other, "--phone", "+919800000002")).phone_number_id
  const inbound = await fetch(`http://127.0.0.1:${env.GATEWAY_SIM_PORT}/simulate/wa/inbound`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ phone_number_id: fx.waNumber, from: PHONE, text: "hi", name: "Asha" })
  })
  if (inbound.status !== 202) throw new Error(`simulated inbound: ${inbound.status} ${await inbound.text()}`)
  const windowOpen = () =>
    until(async () => (await db("SELECT 1 FROM conversations WHERE phone_number_id = $1 AND customer_phone = $2 AND last_inbound_at > now() - interval '1 hour'", [fx.waNumber, PHONE])).length > 0)
  if (!(await windowOpen())) throw new Error(`the inbound message did not open ${PHONE}'s window`)
  await ensureDeveloperWebhook()
  // Conversions go somewhere: good events are accepted (202), not 409 capi_not_configured.
  await must("capi config", call("PUT", "/api/v1/app/meta-ads/capi/config", fx.owner, { dataset_id: "1234567890", access_token: "EAAB-fuzz-token" }))
  fx.waTemplate = await makeWaTemplate(waTextTemplate(WA.template))
  fx.waRichTemplate = await makeWaTemplate(waRichTemplate(WA.rich))
  // The simulator rejects a name with "reject" in it.
  const [rejected] = await db<{ status: string }>("SELECT status FROM wa_templates WHERE template_id = $1::uuid", [await makeWaTemplate(waTextTemplate(WA.rejected))])
  if (rejected?.status !== "REJECTED") throw new Error(`the simulator did not reject ${WA.rejected}: ${JSON.stringify(rejected)}`)
  fx.deletedWaTemplate = await makeWaTemplate(waTextTemplate(WA.deleted))
  await must("delete WhatsApp template", call("DELETE", `/api/v1/public/templates/${fx.deletedWaTemplate}`, basic()))
  // Never reviewed (no upstream id): stays PENDING.
  const [waba] = await db<{ waba_id: string }>("SELECT waba_id FROM wa_numbers WHERE phone_number_id = $1", [fx.waNumber])
  await db(
    `INSERT INTO wa_templates (account_id, waba_id, name, language, category, kind, components, status) VALUES ($1, $2, $3, 'en', 'UTILITY', 'text', $4::jsonb, 'PENDING')`,
    [fx.account, waba!.waba_id, WA.pending, JSON.stringify([WA_BODY])]
  )
  const [foreignWaba] = await db<{ waba_id: string }>("SELECT waba_id FROM wa_numbers WHERE phone_number_id = $1", [fx.foreignWaNumber])
  // Another account's: one of a name only it has, one named as the account's (its wallet is empty: sent with its key, 402).
  const foreign = await db<{ id: string }>(
    `INSERT INTO wa_templates (account_id, waba_id, name, language, category, kind, components, status)
     SELECT $1, $2, name, 'en', 'UTILITY', 'text', $4::jsonb, 'APPROVED' FROM unnest($3::text[]) AS name RETURNING template_id::text AS id`,
    [other, foreignWaba!.waba_id, [WA.foreign, WA.template], JSON.stringify([WA_BODY])]
  )
  fx.foreignWaTemplate = foreign[0]!.id
  const foreignOwner = await login(USERS.login.email, USERS.login.password)
  fx.foreignSecretKey = (await must("foreign secret key", call("POST", "/api/v1/app/developer/secret-key", foreignOwner))).secret_key
}

/**
 * Two partners of the e-mail API (EMAIL's fixtures each): the partner, its quota far above what the
 * fuzz sends and relayed at once, and another whose daily quota is used up (its sends stop there,
 * 429), with a pending identity, destination, suppressed address and production-access request of
 * its own. A message of each, recorded; a cursor of each one's suppression list; a used
 * verification token.
 */
const setUpPartnerEmail = async () => {
  const mine = await cli("admin", "create-partner", "--name", "Fuzz partner")
  const other = await cli("admin", "create-partner", "--name", "Foreign partner")
  fx.partnerKey = mine.api_key
  fx.partnerId = mine.partner_id
  fx.foreignPartnerKey = other.api_key
  fx.foreignPartnerId = other.partner_id
  await cli("admin", "email-quota", fx.partnerId, "--daily", "100000000", "--rate", "1000")
  for (const key of [fx.partnerKey, fx.foreignPartnerKey]) {
    const domain = await must("domain identity", partnerCall("POST", "/identities", key, { identity: EMAIL.domain }))
    await cli("admin", "email-identity-verify", domain.id)
    if (key === fx.partnerKey) fx.emailIdentity = domain.id
    const names = key === fx.partnerKey ? [EMAIL.name] : [EMAIL.name, EMAIL.foreignName]
    for (const name of names) {
      const set = await must("configuration set", partnerCall("POST", "/configuration-sets", key, { name, event_destinations: [{ url: "https://example.com/hook", events: ["SEND", "DELIVERY"] }] }))
      if (key === fx.foreignPartnerKey) fx.foreignDestination = set.event_destinations[0].destination_id
      await must("e-mail template", partnerCall("POST", "/templates", key, { name, subject: "Hello {{name}}", html: "<p>Hello {{name}}</p>", text: "Hello {{name}}" }))
    }
    await must("send template", partnerCall("POST", "/templates", key, { name: EMAIL.sendTemplate, subject: "Hello {{name}}", html: "<p>Hello {{name}}</p>", text: "Hello {{name}}" }))
    const suppressed = key === fx.partnerKey ? [EMAIL.suppressed, `also-${EMAIL.suppressed}`] : [EMAIL.suppressed, EMAIL.foreignSuppressed, `also-${EMAIL.suppressed}`]
    for (const address of suppressed) await must("suppression", partnerCall("PUT", `/suppression/${address}`, key, {}))
    const cursor = (await must("suppression page", partnerCall("GET", "/suppression?limit=1", key))).next_cursor as string
    const sent = (await must("send", partnerCall("POST", "/emails", key, { from: EMAIL.sender, to: [EMAIL.recipient], subject: "fixture", text: "fixture" }), 202)).message_id as string
    if (!(await emailRecorded(sent))) throw new Error(`the fixture message ${sent} has no row in email_messages within 10 s`)
    if (key === fx.partnerKey) {
      fx.suppressionCursor = cursor
      fx.emailMessage = sent
    } else {
      fx.foreignSuppressionCursor = cursor
      fx.foreignEmailMessage = sent
    }
  }
  fx.foreignIdentity = (await must("foreign identity", partnerCall("POST", "/identities", fx.foreignPartnerKey, { identity: `foreign.${EMAIL.domain}` }))).id
  await must("production access", partnerCall("POST", "/production-access", fx.foreignPartnerKey, { mail_type: "MARKETING", website_url: "https://foreign.example.com", use_case_description: "news" }))
  await cli("admin", "email-quota", fx.foreignPartnerId, "--daily", "0")
  fx.usedVerifyToken = await makeVerifyToken()
  await must("verify", call("GET", `${PARTNER}/verify?token=${encodeURIComponent(fx.usedVerifyToken)}`))
}

beforeAll(async () => {
  // The in-process gateway simulator on a known port: the test posts an inbound WhatsApp message to it.
  const simPort = await freePort()
  env.GATEWAY_SIM_PORT = String(simPort)
  node = await startHerald(env)
  fx.account = (await cli("admin", "create-account", "--email", USERS.owner.email, "--password", USERS.owner.password, "--label", "Fuzz", "--plan", "growth")).account_id
  // The secret key's surfaces share the plan's bucket (growth: 300 a minute, burst 50): ~100 requests an operation need more.
  await cli("admin", "set-plan", fx.account, "enterprise", "--rate", "1000000")
  fx.bot = (await cli("admin", "create-bot", fx.account, "--name", "Fuzz bot", "--status", "active", "--use-case", "promotional")).bot_id
  fx.pendingBot = (await cli("admin", "create-bot", fx.account, "--name", "Pending bot")).bot_id
  await cli("admin", "wallet-credit", fx.account, "1000")
  const other = (await cli("admin", "create-account", "--email", USERS.login.email, "--password", USERS.login.password, "--label", "Login", "--plan", "growth")).account_id
  fx.foreignBot = (await cli("admin", "create-bot", other, "--name", "Foreign bot", "--status", "active")).bot_id
  await cli("admin", "create-account", "--email", USERS.multi.email, "--password", USERS.multi.password, "--label", "Multi", "--plan", "growth")
  await cli("admin", "create-account", "--email", USERS.spare.email, "--password", USERS.spare.password, "--label", "Spare", "--plan", "growth")
  fx.owner = await login(USERS.owner.email, USERS.owner.password)
  for (const user of [USERS.pw, USERS.tfa, USERS.target]) {
    const added = await must("member", call("POST", "/api/v1/rcs/team", fx.owner, { email: user.email, role: "viewer", assigned_bots: ["*"], password: user.password }))
    if (user === USERS.target) fx.member = added.member.member_id
  }
  // In two accounts: the multi person has their own, and accepts the invitation to this one.
  const multi = await must("multi member", call("POST", "/api/v1/rcs/team", fx.owner, { email: USERS.multi.email, role: "viewer", assigned_bots: ["*"] }))
  await must("multi accepts", call("POST", `/api/v1/rcs/team/invitations/${multi.member_id}/accept`, await login(USERS.multi.email, USERS.multi.password)))
  await sessionToken()
  fx.pw = await login(USERS.pw.email, USERS.pw.password)
  fx.tfa = await login(USERS.tfa.email, USERS.tfa.password)
  const [pwRow] = await db<{ password_hash: string; tokens_valid_after: unknown }>("SELECT password_hash, tokens_valid_after FROM users WHERE email = $1", [USERS.pw.email])
  fx.pwRow = pwRow!
  const allScopes = ["broadcasts:read", "broadcasts:write", "contacts:read", "contacts:write", "auto_replies:read", "webhooks:read", "webhooks:write", "messages:send", "templates:read", "templates:write"]
  fx.apiKey = (await must("api key", call("POST", "/api/v1/rcs/api-keys", fx.owner, { name: "fuzz all scopes", scopes: allScopes }))).raw_key
  fx.patchKey = (await must("patch key", call("POST", "/api/v1/rcs/api-keys", fx.owner, { name: "fuzz patched", scopes: ["contacts:read"] }))).key_id
  fx.revokedSecretKey = (await must("secret key", call("POST", "/api/v1/app/developer/secret-key", fx.owner))).secret_key
  fx.secretKey = (await must("secret key", call("POST", "/api/v1/app/developer/secret-key", fx.owner))).secret_key
  await setUpWhatsApp(other)
  fx.template = await MAKE.template()
  fx.list = await MAKE.list()
  await must("import", call("POST", `/api/v1/rcs/contact-lists/${fx.list}/contacts`, fx.owner, { contacts: [{ phone: PHONE, name: "A" }, { phone: "+919876541235" }, { phone: "+919876541236" }] }))
  fx.deletedTemplate = await MAKE.template()
  await must("delete template", call("DELETE", `/api/v1/rcs/templates/${fx.deletedTemplate}`, fx.owner))
  fx.deletedList = await MAKE.list()
  await must("delete list", call("DELETE", `/api/v1/rcs/contact-lists/${fx.deletedList}`, fx.owner))
  fx.webhook = await MAKE.webhook()
  fx.rule = await MAKE.rule()
  fx.broadcast = await MAKE.broadcast()
  fx.message = (await must("send", call("POST", "/api/v1/rcs/messages/send", fx.owner, { bot_id: fx.bot, to: PHONE, text: "fixture" }))).message_id
  await setUpPartnerEmail()
  await ensureDeadLetter()
  openapi = (await fetch(`${node.url}/api/v1/openapi.json`).then((r) => r.json())) as Record<string, any>
  await installWriteTriggers()
  // Some 20 CLI processes and a few dozen requests: past 180 s beside the suite's heaviest
  // files (a clean clone runs graphql, whatsapp, console and the authorization matrix beside it).
}, 360_000)
afterAll(() => node?.kill())

const excerpt = (text: string, max = 300) => {
  const shown = JSON.stringify(text.length > max ? text.slice(0, max) : text)
  return text.length > max ? `${shown}… (${text.length} chars)` : shown
}

const show = (exchange: Exchange) => {
  const r = exchange.request
  const body = r.body === undefined ? "(none)" : excerpt(r.body.toString("utf8"))
  return [
    `     ${r.method} ${r.url.length > 300 ? `${r.url.slice(0, 300)}… (${r.url.length} chars)` : r.url}`,
    `     headers: ${JSON.stringify(r.shownHeaders)}`,
    `     body${r.body === undefined ? "" : ` (${r.body.length} bytes)`}: ${body}`,
    `     answer: ${exchange.error ?? `${exchange.status} ${excerpt(exchange.answer, 400)}`} in ${exchange.ms} ms`,
    ...(exchange.note ? exchange.note.split("\n").map((l) => `     wrote: ${l}`) : [])
  ].join("\n")
}

describe("hostile input", () => {
  it("raw requests: a body that stops short is answered 408, one the HTTP parser refuses gets the error envelope; neither writes", async () => {
    const failures: Array<string> = []
    const secretHash = async () => (await db<{ h: string }>("SELECT secret_key_hash AS h FROM accounts WHERE account_id = $1", [fx.account]))[0]!.h
    const send = JSON.stringify({ bot_id: fx.bot, to: PHONE, text: "stalled" })
    const waSend = JSON.stringify({ fullPhoneNumber: PHONE, type: "Text", data: { message: "stalled" } })
    const waTemplateBody = JSON.stringify(waTextTemplate(`fuzz_${unique()}`))
    const emailSend = JSON.stringify({ from: EMAIL.sender, to: [EMAIL.recipient], subject: "stalled", text: "stalled" })
    const auth = `Authorization: Bearer ${fx.owner}`
    // status: what the answer must be (408 request_timeout), or any 4xx with the envelope.
    const cases: ReadonlyArray<{ readonly name: string; readonly request: string; readonly status: 408 | "4xx" }> = [
      {
        name: "secret-key regeneration with Content-Length: 100 and 5 bytes",
        request: `POST /api/v1/app/developer/secret-key HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`,
        status: 408
      },
      {
        name: "contact list creation with Content-Length: 100 and a complete 20-byte body",
        request: `POST /api/v1/rcs/contact-lists HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"stalled"}  `,
        status: 408
      },
      {
        name: "a send with a chunked body that never ends",
        request: `POST /api/v1/rcs/messages/send HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${send.length.toString(16)}\r\n${send}\r\n`,
        status: 408
      },
      {
        name: "a WhatsApp send with a chunked body that never ends",
        request: `POST /api/v1/public/message HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${fx.secretKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${
          waSend.length.toString(16)
        }\r\n${waSend}\r\n`,
        status: 408
      },
      {
        name: "a WhatsApp template with Content-Length: 1000 and a complete shorter body",
        request: `POST /api/v1/public/templates HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${fx.secretKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n${waTemplateBody}`,
        status: 408
      },
      {
        name: "a partner's e-mail send with a chunked body that never ends",
        request: `POST ${PARTNER}/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fx.partnerKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${
          emailSend.length.toString(16)
        }\r\n${emailSend}\r\n`,
        status: 408
      },
      {
        name: "a contact import that stops after one line",
        request: `POST /api/v1/rcs/contact-lists/${fx.list}/contacts HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/x-ndjson\r\nContent-Length: 1000\r\n\r\n{"phone":"+919876549876"}\n`,
        status: 408
      },
      {
        name: "headers of 20 kB",
        request: `POST /api/v1/rcs/contact-lists HTTP/1.1\r\nHost: x\r\n${auth}\r\nX-Padding: ${"x".repeat(20_000)}\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"name":"padded"}`,
        status: "4xx"
      },
      {
        name: "a header line without a colon",
        request: `POST /api/v1/rcs/contact-lists HTTP/1.1\r\nHost: x\r\n${auth}\r\nNot a header\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"name":"colons"}`,
        status: "4xx"
      },
      {
        name: "both Content-Length and Transfer-Encoding",
        request: `POST /api/v1/rcs/contact-lists HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/json\r\nContent-Length: 17\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n{"name":"smuggle"}\r\n0\r\n\r\n`,
        status: "4xx"
      }
    ]
    for (const c of cases) {
      const hash = await secretHash()
      const before = await writeMark()
      const answer = await rawRequest(node.port, c.request, REQUEST_TIMEOUT_MS)
      let parsed: any
      try {
        parsed = JSON.parse(answer.body)
      } catch {
        parsed = undefined
      }
      const problems: Array<string> = []
      if (c.status === 408 ? answer.status !== 408 : answer.status < 400 || answer.status >= 500) {
        problems.push(`expected ${c.status}, got ${answer.status === 0 ? "no answer" : answer.status}`)
      }
      const code = c.status === 408 ? parsed?.code === "request_timeout" : typeof parsed?.code === "string" && SNAKE.test(parsed.code)
      if (parsed?.success !== false || !code || typeof parsed?.message !== "string") problems.push(`answer not the ${c.status === 408 ? "request_timeout " : ""}error envelope`)
      if ((await writeMark()) !== before) problems.push(`wrote ${(await db<{ tbl: string; op: string }>("SELECT tbl, op FROM fuzz_writes WHERE id > $1", [before])).map((r) => `${r.op} ${r.tbl}`).join(", ")}`)
      if ((await secretHash()) !== hash) problems.push("the secret key was rotated")
      if (problems.length > 0) failures.push(`${c.name}: ${problems.join("; ")}; answered in ${answer.ms} ms: ${excerpt(`${answer.head}\r\n\r\n${answer.body}`, 500)}`)
    }
    // The secret key made before still works: nothing rotated it.
    const me = await call("GET", "/api/v1/app/me", fx.secretKey)
    if (me.status !== 200) failures.push(`the secret key no longer works: ${me.status} ${JSON.stringify(me.body)}`)
    expect(failures).toEqual([])
  }, 300_000)

  it(
    "every operation of the OpenAPI document answers hostile input with a 4xx and writes nothing",
    async () => {
      const ops = operations(openapi).filter((op) => ONLY === undefined || op.key.includes(ONLY))
      expect(ops.length).toBeGreaterThan(0)
      const started = Date.now()
      interface Group {
        readonly op: Op
        readonly seed: number
        readonly path: string
        readonly first: Exchange
        count: number
      }
      const groups = new Map<string, Group>()
      for (const [index, op] of ops.entries()) {
        const seed = (SEED + Math.imul(index + 1, 0x9e3779b1)) | 0
        // First each known-good request as it is: shows (in the table) that the fuzz starts deep.
        for (let alternative = 0; alternative < Math.max(1, op.goodBodies.length); alternative++) {
          const good: Spec = { alternative, query: [], faults: [] }
          const failures = await probe(op, good, (status, code) => baselines.set(op.key, [...(baselines.get(op.key) ?? []), status < 300 ? `${status}` : `${status} ${code}`]))
          for (const failure of failures) {
            if (!groups.has(failure.key)) groups.set(failure.key, { op, seed, path: "", first: failure.exchange, count: 1 })
          }
        }
        let run = 0
        const details = await fc.check(
          fc.asyncProperty(specArbitrary(op), async (spec) => {
            const path = String(run++)
            if ((hangs.get(op.key) ?? 0) >= MAX_HANGS) return true
            for (const failure of await probe(op, spec)) {
              const group = groups.get(failure.key)
              if (group) group.count++
              else groups.set(failure.key, { op, seed, path, first: failure.exchange, count: 1 })
            }
            return true
          }),
          { numRuns: RUNS, seed }
        )
        // The property itself never fails: a failure here is an error of the test.
        if (details.failed) throw details.errorInstance ?? new Error(String(details.error))
      }
      const fuzzMs = Date.now() - started

      // Replay the first request of each distinct failure from its seed and path, and shrink it.
      interface Result {
        readonly key: string
        readonly group: Group
        readonly replay: string
        readonly minimal: Exchange | undefined
      }
      const results: Array<Result> = []
      let shrinkRequests = 0
      const shrinkUntil = Date.now() + SHRINK_MS
      for (const [key, group] of groups) {
        let minimal: Exchange | undefined
        let replay = "not replayed (too many distinct failures)"
        if (group.path === "") {
          replay = "the operation's known-good request, unmutated"
        } else if (results.filter((r) => r.replay.startsWith("fast-check")).length < SHRINK_GROUPS) {
          let budget = key.includes(" · (e) ") ? 2 : SHRINK_BUDGET
          const details = await fc.check(
            fc.asyncProperty(specArbitrary(group.op), async (spec) => {
              if (budget-- <= 0 || Date.now() > shrinkUntil) return true
              shrinkRequests++
              const found = (await probe(group.op, spec)).find((f) => f.key === key)
              if (found) minimal = found.exchange
              return found === undefined
            }),
            { seed: group.seed, path: group.path }
          )
          replay = details.failed
            ? `fast-check seed ${details.seed}, path "${details.counterexamplePath}" (shrunk in ${details.numShrinks} steps)`
            : `fast-check seed ${group.seed}, path "${group.path}" (did not fail again when replayed: depends on earlier requests)`
        }
        results.push({ key, group, replay, minimal })
      }
      // One entry per kind of failure and answer: the same answer on several operations (one
      // cause, as a rule) is listed once in full, then one line per other operation.
      const entries = new Map<string, Array<Result>>()
      for (const r of results) {
        const same = `${r.key.slice(r.key.indexOf(" · ") + 3)}\u0000${(r.minimal ?? r.group.first).answer}`
        entries.set(same, [...(entries.get(same) ?? []), r])
      }
      const oneLine = (e: Exchange) =>
        `${e.request.method} ${e.request.url.length > 120 ? `${e.request.url.slice(0, 120)}…` : e.request.url} ${JSON.stringify(e.request.shownHeaders)} body ${
          e.request.body === undefined ? "(none)" : excerpt(e.request.body.toString("utf8"), 120)
        }`
      const report = [...entries.values()].map(([r, ...others], i) =>
        [
          `${i + 1}. ${r!.key}   [${r!.group.count}×]`,
          `   replay: ${r!.replay}`,
          ...(r!.minimal ? ["   minimal request:", show(r!.minimal)] : []),
          "   first seen:",
          show(r!.group.first),
          ...(others.length > 0 ? [`   the same on ${others.length} more operation(s):`, ...others.map((o) => `   - ${o.group.op.key} [${o.group.count}×]: ${oneLine(o.minimal ?? o.group.first)}`)] : [])
        ].join("\n")
      )

      const stopped = [...hangs].filter(([, n]) => n >= MAX_HANGS).map(([op]) => `${op} got no more requests after ${MAX_HANGS} went unanswered`)
      if (stopped.length > 0) report.push(stopped.join("\n"))
      const table = [...coverage].map(([op, tally]) =>
        `  ${op.padEnd(60)} good: ${(baselines.get(op) ?? []).join("/").padEnd(12)} fuzzed: ${Object.entries(tally).sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k}×${v}`).join(", ")}`
      )
      console.log(
        `hostile input: ${requests} requests (${RUNS} per operation × ${ops.length} operations, then ${shrinkRequests} shrinking) in ${
          Math.round((Date.now() - started) / 100) / 10
        } s (fuzz ${Math.round(fuzzMs / 1000)} s), FUZZ_SEED=${SEED}\n${table.join("\n")}`
      )
      if (report.length > 0) {
        throw new Error(
          `${groups.size} distinct failure(s) of hostile input (operation · kind · status · code) in ${report.length} entries (FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}; (a) 5xx, (b) 4xx not the envelope, (c) a 4xx wrote, (d) untracked send, (e) no answer):\n\n${report.join("\n\n")}`
        )
      }
    },
    600_000 + RUNS * 6_000
  )
})
