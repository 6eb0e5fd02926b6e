import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import http from "node:http"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// Broadcast personalisation (docs/broadcasts.md, Personalisation): the template's {{name}} and
// {{<param>}} placeholders filled per recipient from the contact's name and params, the
// broadcast's defaults for what a contact lacks. Herald sends through a recording proxy in front
// of the in-process gateway simulator, so the test reads what each recipient was sent.

const iso = useIsolation()
const db = useDb(iso)
let env: Record<string, string>
let node: HeraldProcess
let proxy: http.Server
/** RBM send requests as the gateway received them: the recipient and the contentMessage. */
const sent: Array<{ phone: string; messageId: string; contentMessage: any }> = []
let token = ""
let bot = ""

const call = (method: string, path: string, body?: unknown) => callJson(node.url, method, path, token, body)

/** Forwards every request to the simulator unchanged, recording the bodies of sends. */
const startProxy = async (target: string) => {
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c) => chunks.push(c))
    req.on("end", async () => {
      const body = Buffer.concat(chunks)
      const url = new URL(req.url ?? "/", target)
      const send = url.pathname.match(/^\/v1\/phones\/([^/]+)\/agentMessages$/)
      if (send !== null && req.method === "POST") {
        sent.push({ phone: decodeURIComponent(send[1]!), messageId: url.searchParams.get("messageId") ?? "", contentMessage: JSON.parse(body.toString()).contentMessage })
      }
      try {
        const answer = await fetch(url, {
          method: req.method!,
          headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k)) as Array<[string, string]>),
          ...(body.length > 0 ? { body } : {})
        })
        res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" })
        res.end(Buffer.from(await answer.arrayBuffer()))
      } catch {
        res.destroy()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` }
}

beforeAll(async () => {
  const simPort = await freePort()
  const started = await startProxy(`http://127.0.0.1:${simPort}`)
  proxy = started.server
  // RBM through the proxy; WhatsApp unset, so the node still starts the simulator in-process.
  env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort), GATEWAY_RBM_URL: started.url, GATEWAY_SIM_DELIVERED_MS: "50", GATEWAY_SIM_READ_MS: "100" })
  const cli = cliFor(env)
  node = await startHerald(env)
  const account = (await cli("admin", "create-account", "--email", "hi@personal.io", "--password", "personal password", "--label", "Personal")).account_id
  bot = (await cli("admin", "create-bot", account, "--name", "Promo", "--use-case", "promotional", "--status", "active")).bot_id
  await cli("admin", "bot-throughput", bot, "unlimited")
  await cli("admin", "wallet-credit", account, "100")
  token = (await call("POST", "/api/v1/rcs/auth/login", { email: "hi@personal.io", password: "personal password" })).body.token
}, 300_000)
afterAll(async () => {
  await node?.kill()
  proxy?.closeAllConnections()
  await new Promise((resolve) => proxy?.close(resolve))
})

const template = async (body: Record<string, unknown>) => {
  const r = await call("POST", "/api/v1/rcs/templates", { bot_id: bot, name: `t ${Math.random().toString(36).slice(2)}`, ...body })
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body.template_id as string
}

const list = async (contacts: ReadonlyArray<Record<string, unknown>>) => {
  const created = await call("POST", "/api/v1/rcs/contact-lists", { name: `list ${Math.random().toString(36).slice(2)}` })
  const id = created.body.list.list_id as string
  const imported = await call("POST", `/api/v1/rcs/contact-lists/${id}/contacts`, { contacts })
  expect(imported.body.added).toBe(contacts.length)
  return id
}

const completed = (id: string) =>
  eventually(async () => {
    const b = (await call("GET", `/api/v1/rcs/broadcasts/${id}`)).body.broadcast
    expect(b.status).toBe("completed")
    return b
  }, { timeoutMs: 30_000, intervalMs: 200 })

describe("a personalised broadcast", () => {
  it("sends each contact the template filled with its own name and params, the defaults where it has none", async () => {
    const templateId = await template({
      type: "rich_card",
      rich_card: { title: "Hi {{name}}", description: "Your {{ city }} store has {{offer.pct}}% off this week." },
      suggestions: [{ type: "reply", text: "Shop {{city}}", postback_data: "shop:{{city}}" }]
    })
    const listId = await list([
      { phone: "+919800001111", name: "Asha", params: { city: "Pune", offer: { pct: 20 } } },
      // A blank param and a missing one get the defaults.
      { phone: "+919800002222", name: "Ravi", params: { city: "  " } },
      // No name at all.
      { phone: "+919800003333", params: { city: "Goa", offer: { pct: "15" } } }
    ])
    const body = { name: "Personal", bot_id: bot, template_id: templateId, contact_list_id: listId }

    // Every placeholder needs a default, and every default a placeholder: refused before anything is written.
    const missing = await call("POST", "/api/v1/rcs/broadcasts", body)
    expect(missing.status).toBe(400)
    expect(missing.body.code).toBe("invalid_request")
    expect(missing.body.errors.map((e: any) => e.path)).toEqual(["variables.name", "variables.city", "variables.offer.pct"])
    const misspelt = await call("POST", "/api/v1/rcs/broadcasts", { ...body, variables: { name: "there", city: "your", "offer.pct": "10", cty: "x" } })
    expect(misspelt.status).toBe(400)
    expect(misspelt.body.errors).toEqual([{ path: "variables.cty", message: expect.stringContaining("names no placeholder") }])
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM broadcasts"))[0]!.n).toBe(0)

    const variables = { name: "there", city: "your nearest", "offer.pct": "10" }
    const created = await call("POST", "/api/v1/rcs/broadcasts", { ...body, variables })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    expect(created.body.broadcast.variables).toEqual(variables)
    const id = created.body.broadcast.id
    expect(await completed(id)).toMatchObject({ total_count: 3, sent_count: 3, failed_count: 0 })

    const targets = (await call("GET", `/api/v1/rcs/broadcasts/${id}/targets`)).body.targets as Array<any>
    const byPhone = new Map(targets.map((t) => [t.phone, t.message_id]))
    const received = (phone: string) => {
      const found = sent.filter((s) => s.messageId === byPhone.get(phone))
      expect(found).toHaveLength(1)
      return found[0]!.contentMessage
    }
    const card = (m: any) => m.richCard.standaloneCard.cardContent
    expect(card(received("+919800001111"))).toMatchObject({ title: "Hi Asha", description: "Your Pune store has 20% off this week." })
    expect(received("+919800001111").suggestions).toEqual([{ reply: { text: "Shop Pune", postbackData: "shop:Pune" } }])
    expect(card(received("+919800002222"))).toMatchObject({ title: "Hi Ravi", description: "Your your nearest store has 10% off this week." })
    expect(card(received("+919800003333"))).toMatchObject({ title: "Hi there", description: "Your Goa store has 15% off this week." })
    // The contact values copied with each target are those of the placeholders only.
    const vars = await db<{ vars: unknown }>("SELECT vars FROM broadcast_targets WHERE broadcast_id = $1 ORDER BY target_no", [id])
    expect(vars.map((v) => v.vars)).toEqual([{ name: "Asha", city: "Pune", "offer.pct": 20 }, { name: "Ravi", city: "  " }, { city: "Goa", "offer.pct": "15" }])
  }, 60_000)

  it("fails, unsent and uncharged, a target whose filled text breaks an RCS limit; a template without placeholders goes out as written", async () => {
    const templateId = await template({ type: "text", text: "Dear {{name}}, thanks for shopping with us {{ x }}." })
    const listId = await list([
      { phone: "+919800004444", name: "Meera" },
      { phone: "+919800005555", name: "Long", params: { x: "y".repeat(3_100) } }
    ])
    const r = await call("POST", "/api/v1/rcs/broadcasts", { name: "Limits", bot_id: bot, template_id: templateId, contact_list_id: listId, variables: { name: "friend", x: "" } })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    const done = await completed(r.body.broadcast.id)
    expect(done).toMatchObject({ total_count: 2, sent_count: 1, failed_count: 1 })
    const targets = (await call("GET", `/api/v1/rcs/broadcasts/${r.body.broadcast.id}/targets`)).body.targets as Array<any>
    const long = targets.find((t) => t.phone === "+919800005555")
    expect(long).toMatchObject({ status: "failed", failure_reason: "personalised content breaks RCS limits", error: { category: "content", retryable: false } })
    expect(long.error.detail).toContain("text: at most 3072 characters")
    expect(sent.filter((s) => s.messageId === long.message_id)).toEqual([])
    const [charged] = await db<{ total: string }>("SELECT sum(amount)::text AS total FROM wallet_transactions WHERE kind = 'charge' AND reference LIKE $1", [
      `broadcast:${r.body.broadcast.id}:%`
    ])
    expect(Number(charged!.total)).toBeCloseTo(0.1, 4)
    // The default may be empty when given so.
    expect(sent.find((s) => s.messageId === targets.find((t) => t.phone === "+919800004444").message_id)!.contentMessage.text)
      .toBe("Dear Meera, thanks for shopping with us .")

    // Placeholders need defaults only when the template has some; variables on a plain template are refused.
    const plainText = await template({ type: "text", text: "Big sale today" })
    expect((await call("POST", "/api/v1/rcs/broadcasts", { name: "Plain", bot_id: bot, template_id: plainText, contact_list_id: listId, variables: { name: "x" } })).status).toBe(400)
    const plain = await call("POST", "/api/v1/rcs/broadcasts", { name: "Plain", bot_id: bot, template_id: plainText, contact_list_id: listId })
    expect(plain.status).toBe(200)
    expect(plain.body.broadcast.variables).toEqual({})
    await completed(plain.body.broadcast.id)
    const plainTargets = (await call("GET", `/api/v1/rcs/broadcasts/${plain.body.broadcast.id}/targets`)).body.targets as Array<any>
    for (const t of plainTargets) expect(sent.find((s) => s.messageId === t.message_id)!.contentMessage.text).toBe("Big sale today")
    expect(await db("SELECT vars FROM broadcast_targets WHERE broadcast_id = $1 AND vars IS NOT NULL", [plain.body.broadcast.id])).toEqual([])
  }, 60_000)
})
