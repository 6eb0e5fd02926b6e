import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { encodeRbmCallback, SIGNATURE_HEADER } from "../../src/gateway/rbm/callbacks.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// Auto-replies end to end: rules managed over HTTP (validation, roles, bot scope, API-key scopes),
// and user messages delivered by the in-process gateway simulator through the real RBM callback
// path, answered by the bot's sender actor through the same simulator.

const RBM_TOKEN = "auto-replies-e2e-client-token"
const iso = useIsolation()
const db = useDb(iso)
let env: Record<string, string>
let cli: ReturnType<typeof cliFor>
let node: HeraldProcess
let simUrl: string
const tokens: Record<string, string> = {}
const keys: Record<string, string> = {}
const bots = { one: "", two: "", pending: "", otherAccount: "", broke: "" }
let account = ""

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)
const rules = (botId: string) => `/api/v1/rcs/auto-replies/${botId}`

const hoursRule = (overrides: Record<string, unknown> = {}) => ({ match: "exact", keyword: "hours", reply: { text: "We are open 9 to 5." }, ...overrides })
const ruleCount = async () => (await db<{ n: number }>("SELECT count(*)::int AS n FROM auto_reply_rules"))[0]!.n

const createRule = async (botId: string, body: Record<string, unknown>, token = tokens.owner) => {
  const r = await call("POST", rules(botId), token, body)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body.rule as { rule_id: string }
}

const fires = async (botId: string, query = "") => {
  const r = await call("GET", `${rules(botId)}/fires${query}`, tokens.owner)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body as { fires: Array<Record<string, any>>; count: number; next_cursor?: string }
}

const simulatorTotals = async () => (await (await fetch(`${simUrl}/simulate/log`)).json()) as { callbacks: { pending: number } }
const sendsOf = async (messageId: string) => ((await (await fetch(`${simUrl}/simulate/log?message_id=${messageId}`)).json()) as { sends: number }).sends

/**
 * A user's message through the simulator (POST /simulate/inbound), waited for until Herald has
 * answered its callback: the inbound row is written before the auto-reply runs, and the simulator
 * counts the callback in flight until Herald's answer, which comes after the auto-reply is done.
 */
const userSays = async (botId: string, from: string, text: string) => {
  const res = await fetch(`${simUrl}/simulate/inbound`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ bot_id: botId, from, text }) })
  expect(res.status).toBe(202)
  const { message_id } = (await res.json()) as { message_id: string }
  await eventually(async () => {
    expect(await db("SELECT 1 FROM inbound_messages WHERE upstream_id = $1", [message_id])).toHaveLength(1)
    expect((await simulatorTotals()).callbacks.pending).toBe(0)
  })
  return message_id
}

/** An inbound message posted straight to Herald's RBM callback path, signed as RBM signs it: so a test can repeat one. */
const rbmCallback = async (botId: string, from: string, text: string, upstreamId: string) => {
  const event = JSON.stringify({ senderPhoneNumber: from, messageId: upstreamId, sendTime: new Date().toISOString(), agentId: botId, text })
  const { body, signature } = encodeRbmCallback({ event, pubsubMessageId: String(Date.now()), publishTime: new Date().toISOString(), subscription: "e2e", clientToken: RBM_TOKEN })
  const res = await fetch(`${node.url}/api/v1/rcs/gateway/rbm/events`, { method: "POST", headers: { "content-type": "application/json", [SIGNATURE_HEADER]: signature }, body })
  expect(res.status, await res.clone().text()).toBe(200)
}

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort), GATEWAY_RBM_CLIENT_TOKEN: RBM_TOKEN, GATEWAY_SIM_DELIVERED_MS: "50", GATEWAY_SIM_READ_MS: "100" })
  cli = cliFor(env)
  node = await startHerald(env)
  account = (await cli("admin", "create-account", "--email", "ar@example.com", "--password", "ar password", "--label", "AR", "--plan", "growth")).account_id
  const other = (await cli("admin", "create-account", "--email", "ar-other@example.com", "--password", "other password", "--label", "Other")).account_id
  const broke = (await cli("admin", "create-account", "--email", "ar-broke@example.com", "--password", "broke password", "--label", "Broke")).account_id
  await cli("admin", "wallet-credit", account, "100")
  bots.one = (await cli("admin", "create-bot", account, "--name", "One", "--status", "active")).bot_id
  bots.two = (await cli("admin", "create-bot", account, "--name", "Two", "--status", "active")).bot_id
  bots.pending = (await cli("admin", "create-bot", account, "--name", "Pending")).bot_id
  bots.otherAccount = (await cli("admin", "create-bot", other, "--name", "Theirs", "--status", "active")).bot_id
  bots.broke = (await cli("admin", "create-bot", broke, "--name", "Broke", "--status", "active")).bot_id
  const login = async (email: string, password: string) => (await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password })).body.token as string
  tokens.owner = await login("ar@example.com", "ar password")
  tokens.broke = await login("ar-broke@example.com", "broke password")
  for (const [name, role, scope] of [["viewer", "viewer", ["*"]], ["operator", "operator", ["*"]], ["scoped", "operator", [bots.two]]] as const) {
    const added = await call("POST", "/api/v1/rcs/team", tokens.owner, { email: `${name}@ar.example.com`, role, assigned_bots: scope, password: "member password" })
    expect(added.status).toBe(200)
    tokens[name] = await login(`${name}@ar.example.com`, "member password")
  }
  for (const [name, scopes] of [["rules", ["auto_replies:read"]], ["contacts", ["contacts:read"]], ["other", ["webhooks:read", "broadcasts:write"]]] as const) {
    keys[name] = (await call("POST", "/api/v1/rcs/api-keys", tokens.owner, { name, scopes })).body.raw_key
  }
}, 300_000)
afterAll(async () => {
  await node?.kill()
})

describe("managing rules", () => {
  it("creates a rule with its defaults, lists it, changes it field by field, and deletes it", async () => {
    const created = await call("POST", rules(bots.one), tokens.operator, { match: "contains", keyword: "  Opening Hours ", reply: { text: "9 to 5" } })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const rule = created.body.rule
    expect(created.body).toEqual({
      success: true,
      rule: { rule_id: expect.any(String), bot_id: bots.one, match: "contains", keyword: "Opening Hours", reply: { text: "9 to 5" }, cooldown_seconds: 3600, active: true, created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/) }
    })
    const listed = await call("GET", rules(bots.one), tokens.viewer)
    expect(listed.status).toBe(200)
    expect(listed.body.success).toBe(true)
    expect(listed.body.rules).toContainEqual(rule)

    const patched = await call("PATCH", `${rules(bots.one)}/${rule.rule_id}`, tokens.operator, { keyword: "hours", cooldown_seconds: 0 })
    expect(patched.status, JSON.stringify(patched.body)).toBe(200)
    expect(patched.body.rule).toEqual({ ...rule, keyword: "hours", cooldown_seconds: 0 })
    const template = await call("POST", "/api/v1/rcs/templates", tokens.owner, { bot_id: bots.one, name: "hours", type: "text", text: "Open 9 to 5, Monday to Friday." })
    expect(template.status).toBe(200)
    const toTemplate = await call("PATCH", `${rules(bots.one)}/${rule.rule_id}`, tokens.owner, { reply: { template_id: template.body.template_id }, active: false, match: "exact" })
    expect(toTemplate.body.rule).toEqual({ ...rule, keyword: "hours", cooldown_seconds: 0, match: "exact", active: false, reply: { template_id: template.body.template_id } })
    // An empty patch changes nothing.
    expect((await call("PATCH", `${rules(bots.one)}/${rule.rule_id}`, tokens.owner, {})).body.rule).toEqual(toTemplate.body.rule)

    expect(await call("DELETE", `${rules(bots.one)}/${rule.rule_id}`, tokens.operator)).toEqual({ status: 200, body: { success: true } })
    expect((await call("GET", rules(bots.one), tokens.owner)).body.rules.map((r: any) => r.rule_id)).not.toContain(rule.rule_id)
    for (const [method, body] of [["PATCH", { active: true }], ["DELETE", undefined]] as const) {
      const gone = await call(method, `${rules(bots.one)}/${rule.rule_id}`, tokens.owner, body)
      expect(gone.status).toBe(404)
      expect(gone.body.code).toBe("not_found")
    }
  })

  it("lists rules in the order they are tried: exact ones first, then the oldest first", async () => {
    const contains = await createRule(bots.two, hoursRule({ match: "contains", keyword: "order" }))
    const exact = await createRule(bots.two, hoursRule({ keyword: "order status" }))
    const list = (await call("GET", rules(bots.two), tokens.owner)).body.rules.map((r: any) => r.rule_id)
    expect(list.indexOf(exact.rule_id)).toBeLessThan(list.indexOf(contains.rule_id))
    await call("DELETE", `${rules(bots.two)}/${exact.rule_id}`, tokens.owner)
    await call("DELETE", `${rules(bots.two)}/${contains.rule_id}`, tokens.owner)
  })

  it("refuses a bad rule with 400 invalid_request naming the field, and writes nothing", async () => {
    const before = await ruleCount()
    const otherBotTemplate = await call("POST", "/api/v1/rcs/templates", tokens.owner, { bot_id: bots.two, name: "two's", type: "text", text: "Hi" })
    expect(otherBotTemplate.status).toBe(200)
    const cases: Array<[unknown, string]> = [
      [hoursRule({ keyword: "   " }), "keyword"],
      [hoursRule({ keyword: "k".repeat(201) }), "keyword"],
      [hoursRule({ match: "regex" }), "match"],
      [{ match: "exact", reply: { text: "x" } }, "keyword"],
      [hoursRule({ reply: {} }), "reply"],
      [hoursRule({ reply: { text: "x", template_id: otherBotTemplate.body.template_id } }), "reply"],
      [hoursRule({ reply: { text: " " } }), "reply.text"],
      [hoursRule({ reply: { text: "x".repeat(3073) } }), "reply.text"],
      [hoursRule({ reply: { template_id: otherBotTemplate.body.template_id } }), "reply.template_id"],
      [hoursRule({ reply: { template_id: "5b0e7a8c-8f1e-4a53-9f6a-1f2d3c4b5a69" } }), "reply.template_id"],
      [hoursRule({ cooldown_seconds: -1 }), "cooldown_seconds"],
      [hoursRule({ cooldown_seconds: 30 * 86_400 + 1 }), "cooldown_seconds"],
      [hoursRule({ cooldown_seconds: 1.5 }), "cooldown_seconds"],
      [hoursRule({ active: "yes" }), "active"]
    ]
    for (const [body, path] of cases) {
      const r = await call("POST", rules(bots.one), tokens.owner, body)
      expect(r.status, JSON.stringify(body).slice(0, 100)).toBe(400)
      expect(r.body.success).toBe(false)
      expect(r.body.code).toBe("invalid_request")
      expect(r.body.errors.map((e: any) => e.path), JSON.stringify(r.body)).toContain(path)
    }
    // The same checks on a change.
    const rule = await createRule(bots.one, hoursRule({ keyword: "validation" }))
    const bad = await call("PATCH", `${rules(bots.one)}/${rule.rule_id}`, tokens.owner, { reply: { text: "" } })
    expect(bad.status).toBe(400)
    expect(bad.body.errors).toEqual([{ path: "reply.text", message: "must not be empty" }])
    expect((await call("PATCH", `${rules(bots.one)}/${rule.rule_id}`, tokens.owner, { keyword: "" })).status).toBe(400)
    expect(await ruleCount()).toBe(before + 1)
    await call("DELETE", `${rules(bots.one)}/${rule.rule_id}`, tokens.owner)
  })

  it("a rule may be set on a bot not active yet; it fires once the bot is", async () => {
    const rule = await createRule(bots.pending, hoursRule())
    expect((await call("GET", rules(bots.pending), tokens.owner)).body.rules.map((r: any) => r.rule_id)).toEqual([rule.rule_id])
  })
})

describe("who may touch rules", () => {
  it("viewers read but cannot write: 403 forbidden, nothing written", async () => {
    const rule = await createRule(bots.one, hoursRule({ keyword: "viewer" }))
    const before = await ruleCount()
    expect((await call("GET", rules(bots.one), tokens.viewer)).status).toBe(200)
    expect((await call("GET", `${rules(bots.one)}/fires`, tokens.viewer)).status).toBe(200)
    for (const [method, path, body] of [["POST", rules(bots.one), hoursRule()], ["PATCH", `${rules(bots.one)}/${rule.rule_id}`, { active: false }], ["DELETE", `${rules(bots.one)}/${rule.rule_id}`, undefined]] as const) {
      const r = await call(method, path, tokens.viewer, body)
      expect(r.status).toBe(403)
      expect(r.body.code).toBe("forbidden")
    }
    expect(await ruleCount()).toBe(before)
    expect((await call("GET", rules(bots.one), tokens.owner)).body.rules.find((r: any) => r.rule_id === rule.rule_id).active).toBe(true)
  })

  it("a member scoped to bots gets 403 bot_not_in_scope on other bots, and works on its own", async () => {
    const rule = await createRule(bots.one, hoursRule({ keyword: "scope" }))
    for (const [method, path, body] of [
      ["GET", rules(bots.one), undefined],
      ["GET", `${rules(bots.one)}/fires`, undefined],
      ["POST", rules(bots.one), hoursRule()],
      ["PATCH", `${rules(bots.one)}/${rule.rule_id}`, { active: false }],
      ["DELETE", `${rules(bots.one)}/${rule.rule_id}`, undefined]
    ] as const) {
      const r = await call(method, path, tokens.scoped, body)
      expect(r.status, `${method} ${path}`).toBe(403)
      expect(r.body).toEqual({ success: false, code: "bot_not_in_scope", message: "bot not in scope" })
    }
    const own = await createRule(bots.two, hoursRule({ keyword: "mine" }), tokens.scoped)
    expect((await call("GET", rules(bots.two), tokens.scoped)).body.rules.map((r: any) => r.rule_id)).toContain(own.rule_id)
    expect((await call("DELETE", `${rules(bots.two)}/${own.rule_id}`, tokens.scoped)).status).toBe(200)
  })

  it("another account's bot, an unknown bot and an unknown rule are 404 not_found", async () => {
    const theirs = await call("POST", rules(bots.otherAccount), tokens.owner, hoursRule())
    expect(theirs.status).toBe(404)
    expect(theirs.body.code).toBe("not_found")
    for (const bot of [bots.otherAccount, "5b0e7a8c-8f1e-4a53-9f6a-1f2d3c4b5a69", "not-a-uuid"]) {
      expect((await call("GET", rules(bot), tokens.owner)).status).toBe(404)
      expect((await call("GET", `${rules(bot)}/fires`, tokens.owner)).status).toBe(404)
    }
    // A rule is reached only through its own bot.
    const rule = await createRule(bots.one, hoursRule({ keyword: "own bot" }))
    for (const path of [`${rules(bots.two)}/${rule.rule_id}`, `${rules(bots.one)}/5b0e7a8c-8f1e-4a53-9f6a-1f2d3c4b5a69`, `${rules(bots.one)}/nope`]) {
      const r = await call("PATCH", path, tokens.owner, { active: false })
      expect(r.status).toBe(404)
      expect(r.body.code).toBe("not_found")
      expect((await call("DELETE", path, tokens.owner)).status).toBe(404)
    }
    expect((await call("GET", rules(bots.one), tokens.owner)).body.rules.find((r: any) => r.rule_id === rule.rule_id).active).toBe(true)
  })

  it("API keys: the rules with auto_replies:read, the firings with contacts:read, no writes", async () => {
    expect((await call("GET", rules(bots.one), keys.rules)).status).toBe(200)
    const noFires = await call("GET", `${rules(bots.one)}/fires`, keys.rules)
    expect(noFires.status).toBe(403)
    expect(noFires.body).toMatchObject({ code: "missing_scope", message: expect.stringContaining("contacts:read") })
    expect((await call("GET", `${rules(bots.one)}/fires`, keys.contacts)).status).toBe(200)
    const noRules = await call("GET", rules(bots.one), keys.contacts)
    expect(noRules.status).toBe(403)
    expect(noRules.body).toMatchObject({ code: "missing_scope", message: expect.stringContaining("auto_replies:read") })
    expect((await call("GET", rules(bots.one), keys.other)).body.code).toBe("missing_scope")
    const write = await call("POST", rules(bots.one), keys.rules, hoursRule())
    expect(write.status).toBe(403)
    expect(write.body.code).toBe("api_key_endpoint_not_allowed")
  })
})

describe("replying to users", () => {
  it("a matching message fires the rule: the firing is listed, the reply is sent once and charged; the cooldown holds per sender", async () => {
    const rule = await createRule(bots.one, hoursRule({ keyword: "Hours?", reply: { text: "We are open 9 to 5." } }))
    const alice = "+919876543210"
    await userSays(bots.one, alice, "  hours? ")
    const first = await eventually(async () => {
      const page = await fires(bots.one)
      expect(page.fires).toHaveLength(1)
      return page.fires[0]!
    })
    const { reply_status, ...fire } = first
    // Null until the sender actor has recorded the message.
    expect([null, "queued", "sent", "delivered", "read"]).toContain(reply_status)
    expect(fire).toEqual({
      fire_id: expect.any(String),
      rule_id: rule.rule_id,
      bot_id: bots.one,
      recipient: alice,
      inbound_text: "  hours? ",
      message_id: expect.any(String),
      fired_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/)
    })
    // The bot's sender actor sends it through the gateway once, and it is charged once.
    await eventually(async () => expect(await sendsOf(first.message_id)).toBe(1))
    await eventually(async () => expect((await fires(bots.one)).fires[0]!.reply_status).toMatch(/^(sent|delivered|read)$/))
    const [message] = await db<{ source: string; recipient: string; content: any }>("SELECT source, recipient, content FROM messages WHERE message_id = $1", [first.message_id])
    expect(message).toEqual({ source: "auto_reply", recipient: alice, content: { type: "text", text: "We are open 9 to 5.", suggestions: [] } })
    await eventually(async () =>
      expect(await db("SELECT amount::text FROM wallet_transactions WHERE reference = $1 AND kind = 'charge'", [first.message_id])).toEqual([{ amount: "0.1000" }])
    )

    // The same sender again, within the cooldown: recorded, not answered.
    await userSays(bots.one, alice, "HOURS?")
    expect((await fires(bots.one)).fires).toHaveLength(1)
    // Another sender is answered.
    const bob = "+919876543211"
    await userSays(bots.one, bob, "hours?")
    const page = await fires(bots.one)
    expect(page.fires.map((f) => f.recipient)).toEqual([bob, alice])
    await eventually(async () => expect(await sendsOf(page.fires[0]!.message_id)).toBe(1))
    expect(await sendsOf(first.message_id)).toBe(1)
  })

  it("an inactive rule does not fire, and fires once activated; a message matching nothing fires nothing", async () => {
    const rule = await createRule(bots.one, hoursRule({ keyword: "paused", active: false }))
    const carol = "+919876543212"
    const before = (await fires(bots.one)).fires.length
    await userSays(bots.one, carol, "paused")
    await userSays(bots.one, carol, "nothing to see")
    expect((await fires(bots.one)).fires).toHaveLength(before)
    await call("PATCH", `${rules(bots.one)}/${rule.rule_id}`, tokens.owner, { active: true })
    await userSays(bots.one, carol, "Paused")
    const latest = (await fires(bots.one)).fires[0]!
    expect([latest.rule_id, latest.recipient]).toEqual([rule.rule_id, carol])
  })

  it("a repeated callback of one inbound message fires nothing more, even with no cooldown", async () => {
    const rule = await createRule(bots.two, hoursRule({ keyword: "again", cooldown_seconds: 0 }))
    const dave = "+919876543213"
    await rbmCallback(bots.two, dave, "again", "upstream-dup-1")
    await rbmCallback(bots.two, dave, "again", "upstream-dup-1")
    await rbmCallback(bots.two, dave, "again", "upstream-dup-1")
    expect((await fires(bots.two)).fires.filter((f) => f.rule_id === rule.rule_id)).toHaveLength(1)
    // A new message of the same sender is answered (no cooldown).
    await rbmCallback(bots.two, dave, "again", "upstream-dup-2")
    const fired = (await fires(bots.two)).fires.filter((f) => f.rule_id === rule.rule_id)
    expect(fired).toHaveLength(2)
    await eventually(async () => {
      for (const f of fired) expect(await sendsOf(f.message_id)).toBe(1)
    })
  })

  it("nothing fires for a bot that is not active, nor for an account whose wallet cannot pay", async () => {
    await userSays(bots.pending, "+919876543214", "hours")
    expect((await fires(bots.pending)).fires).toHaveLength(0)
    const r = await call("POST", rules(bots.broke), tokens.broke, hoursRule())
    expect(r.status).toBe(200)
    await userSays(bots.broke, "+919876543214", "hours")
    const page = await call("GET", `${rules(bots.broke)}/fires`, tokens.broke)
    expect(page.body.fires).toEqual([])
  })

  it("firings page newest first by cursor; a cursor not given out is 400", async () => {
    await createRule(bots.two, hoursRule({ keyword: "page", cooldown_seconds: 0 }))
    for (let i = 0; i < 5; i++) await rbmCallback(bots.two, "+919876543215", "page", `upstream-page-${i}`)
    const all = (await fires(bots.two, "?limit=1000")).fires
    expect(all.length).toBeGreaterThanOrEqual(5)
    const seen: Array<string> = []
    let cursor: string | undefined
    do {
      const page = await fires(bots.two, `?limit=2${cursor ? `&cursor=${cursor}` : ""}`)
      expect(page.count).toBe(page.fires.length)
      seen.push(...page.fires.map((f) => f.fire_id))
      cursor = page.next_cursor
    } while (cursor)
    expect(seen).toEqual(all.map((f) => f.fire_id))
    const times = all.map((f) => Date.parse(f.fired_at))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    const bad = await call("GET", `${rules(bots.two)}/fires?cursor=garbage`, tokens.owner)
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe("invalid_request")
    expect((await call("GET", `${rules(bots.two)}/fires?limit=0`, tokens.owner)).status).toBe(400)
  })
})
