import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createHmac } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { callJson, cliFor } from "../support/http.ts"
import { envFor } from "../support/isolation.ts"
import { freePort } from "../support/TcpProxy.ts"

// The partner e-mail API end to end (docs/partner-email.md): a real node, its in-process SMTP sink
// (read through the gateway simulator's control route), signed event destinations.

const iso = useIsolation()
const db = useDb(iso)
let env: Record<string, string>
let node: HeraldProcess
let simUrl = ""
let consumer: Awaited<ReturnType<typeof startConsumer>>
const keys: Record<string, string> = {}
const partners: Record<string, string> = {}

const call = (method: string, path: string, key: string | undefined, body?: unknown) =>
  callJson(node.url, method, `/api/v1/partner/email${path}`, key, body)
const cli = (...args: Array<string>) => cliFor(env)(...args)

interface SinkMessage {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string | null
  readonly html: string | null
  readonly headers: Record<string, string>
  readonly received_at: string
}
const sink = async (to: string): Promise<Array<SinkMessage>> =>
  ((await (await fetch(`${simUrl}/simulate/smtp/messages?to=${encodeURIComponent(to)}`)).json()) as { messages: Array<SinkMessage> }).messages

/** An address identity verified the way a person does it: by opening the link mailed to it. */
const verifyAddress = async (key: string, address: string) => {
  const created = await call("POST", "/identities", key, { identity: address })
  expect(created.status).toBe(200)
  const [mail] = await eventually(async () => {
    const messages = await sink(address)
    expect(messages.length).toBeGreaterThan(0)
    return messages
  })
  const link = /https?:\/\/\S+/.exec(mail!.text ?? "")![0]
  const opened = await (await fetch(link)).json()
  expect(opened).toEqual({ success: true, identity: address, status: "VERIFIED" })
  return { id: created.body.id as string, link }
}

const verifyDomain = async (key: string, domain: string) => {
  const created = await call("POST", "/identities", key, { identity: domain })
  await cli("admin", "email-identity-verify", created.body.id)
  return created.body
}

const send = (key: string, body: Record<string, unknown>) => call("POST", "/emails", key, body)

/** The message's row once its status is no longer QUEUED or SENT. */
const settled = (key: string, messageId: string, timeoutMs = 15_000) =>
  eventually(async () => {
    const row = (await call("GET", `/emails/${messageId}`, key)).body
    expect(["QUEUED", "SENT"]).not.toContain(row.status)
    return row
  }, { timeoutMs })

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort), HERALD_EMAIL_RETRY_BASE_MS: "200" })
  node = await startHerald(env)
  consumer = await startConsumer()
  for (const name of ["a", "b"]) {
    const created = await cli("admin", "create-partner", "--name", `partner ${name}`)
    expect(created.api_key).toMatch(/^pk_partner_/)
    keys[name] = created.api_key
    partners[name] = created.partner_id
  }
  // Partner a sends at 50 recipients a second; b keeps the sandbox's 1 a second.
  await cli("admin", "email-quota", partners.a!, "--rate", "50")
}, 300_000)
afterAll(async () => {
  node?.kill()
  await consumer?.close()
})

describe("partner e-mail", () => {
  it("opens to a partner key only: no header, a user token, an API key, a secret key or an unknown partner key is 401", async () => {
    for (const credential of [undefined, "eyJhbGciOiJFUzI1NiJ9.e30.c2ln", "rcs_pk_live_abc", "sk_live_abc", "pk_partner_unknown"]) {
      const r = await call("GET", "/identities", credential)
      expect(r.status).toBe(401)
      expect(r.body).toMatchObject({ success: false, code: "invalid_api_key" })
    }
    const [row] = await db<{ keyHash: string }>("SELECT key_hash AS \"keyHash\" FROM partners WHERE partner_id = $1", [partners.a])
    expect(row!.keyHash).not.toContain(keys.a!.slice(11))
  })

  it("verifies an address by the link mailed to it (once), and a domain by the operator", async () => {
    const { id, link } = await verifyAddress(keys.a!, "sender@brand.test")
    expect((await call("GET", `/identities/${id}`, keys.a)).body).toMatchObject({ success: true, id, identity: "sender@brand.test", type: "EMAIL_ADDRESS", status: "VERIFIED" })
    expect((await fetch(link)).status).toBe(404)
    const domain = await call("POST", "/identities", keys.a, { identity: "Inbox.Test" })
    expect(domain.body).toMatchObject({ identity: "inbox.test", type: "DOMAIN", status: "PENDING" })
    expect(domain.body.dkim_tokens).toHaveLength(3)
    expect(await cli("admin", "email-identity-verify", domain.body.id)).toMatchObject({ status: "VERIFIED", identity: "inbox.test" })
    expect((await call("POST", "/identities", keys.a, { identity: "sender@brand.test" })).status).toBe(409)
    expect((await call("POST", "/identities", keys.a, { identity: "not an address@" })).body).toMatchObject({ code: "invalid_request" })
    // Another partner's identity is as good as unknown.
    expect((await call("GET", `/identities/${id}`, keys.b)).status).toBe(404)
    expect((await call("DELETE", `/identities/${id}`, keys.b)).status).toBe(404)
  })

  it("the sandbox sends only from and to verified identities, and a send is delivered to the sink", async () => {
    expect((await send(keys.a!, { from: "nobody@brand.test", to: ["x@inbox.test"], subject: "s", text: "t" })).body).toMatchObject({
      code: "invalid_request",
      errors: [{ path: "from" }]
    })
    const refused = await send(keys.a!, { from: "sender@brand.test", to: ["someone@elsewhere.test"], subject: "s", text: "t" })
    expect(refused.status).toBe(400)
    expect(refused.body.message).toContain("sandbox")
    const before = (await db<{ n: number }>("SELECT count(*)::int AS n FROM email_messages"))[0]!.n
    expect(before).toBe(0)
    // More than the mailer can be handed (768 KB), each part within its own limit: a 400 naming the
    // field, not a 503 from the bus.
    const huge = await send(keys.a!, { from: "sender@brand.test", to: ["ann@inbox.test"], subject: "s", text: "y".repeat(400 * 1024), html: "x".repeat(400 * 1024) })
    expect(huge.status).toBe(400)
    expect(huge.body.errors).toEqual([{ path: "html", message: expect.stringContaining("up to 768 KB") }])
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM email_messages"))[0]!.n).toBe(0)

    const sent = await send(keys.a!, { from: "Sender@Brand.test", to: ["ann@inbox.test"], cc: ["cc@inbox.test"], subject: "Hello", text: "Hi Ann", html: "<p>Hi Ann</p>" })
    expect(sent.status).toBe(202)
    expect(sent.body).toEqual({ success: true, message_id: expect.any(String) })
    const row = await settled(keys.a!, sent.body.message_id)
    expect(row).toMatchObject({ message_id: sent.body.message_id, from: "sender@brand.test", to: ["ann@inbox.test"], subject: "Hello", status: "DELIVERED" })
    expect(row.events.map((e: { type: string }) => e.type)).toEqual(["SEND", "DELIVERY", "DELIVERY"])
    const [mail] = await sink("ann@inbox.test")
    expect(mail).toMatchObject({ from: "sender@brand.test", subject: "Hello", html: "<p>Hi Ann</p>" })
    expect(mail!.headers["x-herald-message-id"]).toBe(sent.body.message_id)
    expect(mail!.headers.cc).toBe("cc@inbox.test")
    expect((await call("GET", `/emails/${sent.body.message_id}`, keys.b)).status).toBe(404)
  })

  it("a hard bounce suppresses the address, a soft one is retried and then bounces without suppressing, a complaint follows its delivery", async () => {
    const bounce = (await send(keys.a!, { from: "sender@brand.test", to: ["bounce1@inbox.test"], subject: "b", text: "b" })).body.message_id
    const soft = (await send(keys.a!, { from: "sender@brand.test", to: ["soft1@inbox.test"], subject: "s", text: "s" })).body.message_id
    const complaint = (await send(keys.a!, { from: "sender@brand.test", to: ["complaint1@inbox.test"], subject: "c", text: "c" })).body.message_id

    const bounced = await settled(keys.a!, bounce)
    expect(bounced.status).toBe("BOUNCED")
    expect(bounced.events.at(-1)).toMatchObject({ type: "BOUNCE", recipient: "bounce1@inbox.test", detail: expect.stringMatching(/^hard: 550/) })
    expect((await call("GET", "/suppression/bounce1@inbox.test", keys.a)).body).toMatchObject({ email: "bounce1@inbox.test", reason: "BOUNCE" })

    const complained = await eventually(async () => {
      const row = (await call("GET", `/emails/${complaint}`, keys.a)).body
      expect(row.status).toBe("COMPLAINED")
      return row
    })
    expect(complained.events.map((e: { type: string }) => e.type)).toEqual(["SEND", "DELIVERY", "COMPLAINT"])
    expect((await call("GET", "/suppression/complaint1@inbox.test", keys.a)).body).toMatchObject({ reason: "COMPLAINT" })

    // Retried at 200, 600 and 1800 ms: three more tries, then a soft bounce.
    const softRow = await settled(keys.a!, soft, 20_000)
    expect(softRow.status).toBe("BOUNCED")
    expect(softRow.events.at(-1)).toMatchObject({ type: "BOUNCE", detail: "soft" })
    const [attempts] = await db<{ attempts: number }>("SELECT attempts FROM email_recipients WHERE message_id = $1", [soft])
    expect(attempts!.attempts).toBe(4)
    expect((await call("GET", "/suppression/soft1@inbox.test", keys.a)).status).toBe(404)

    // A suppressed recipient is dropped; left with none, the message is SUPPRESSED.
    const again = (await send(keys.a!, { from: "sender@brand.test", to: ["bounce1@inbox.test"], subject: "b", text: "b" })).body.message_id
    const dropped = (await call("GET", `/emails/${again}`, keys.a)).body
    expect(dropped.status).toBe("SUPPRESSED")
    expect(dropped.events.map((e: { type: string }) => e.type)).toEqual(["SUPPRESSED", "REJECT"])
    expect(await sink("bounce1@inbox.test")).toHaveLength(0)

    const types = (await call("GET", `/events?message_id=${complaint}`, keys.a)).body.events.map((e: { type: string }) => e.type)
    expect(types).toEqual(["COMPLAINT", "DELIVERY", "SEND"])
    const stats = (await call("GET", "/stats", keys.a)).body.stats.last_24_hours
    expect(stats).toMatchObject({ bounced: 2, complained: 1 })
    const reputation = (await call("GET", "/reputation", keys.a)).body
    expect(reputation.bounce_rate).toBeGreaterThan(0)
    expect(reputation.status).toBe("PROBATION")
  })

  it("takes the sink's signed reports only once the delivery they follow is recorded", async () => {
    const post = (body: unknown, secret = "dev-herald-smtp-feedback-secret") => {
      const raw = JSON.stringify(body)
      return fetch(`${node.url}/api/v1/partner/email/smtp-feedback`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-herald-smtp-signature": `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}` },
        body: raw
      })
    }
    const waiting = "00000000-0000-4000-8000-0000000000f1"
    await db(`INSERT INTO email_messages (message_id, partner_id, from_address, to_addresses, subject, recipient_count, status)
              VALUES ($1, $2, 'sender@brand.test', '{late@inbox.test}', 's', 1, 'QUEUED')`, [waiting, partners.a])
    await db("INSERT INTO email_recipients (message_id, recipient, partner_id, status) VALUES ($1, 'late@inbox.test', $2, 'sending')", [waiting, partners.a])
    const report = { type: "complaint", message_id: waiting, recipient: "late@inbox.test", detail: "abuse", occurred_at: new Date().toISOString() }
    expect((await post(report, "another secret")).status).toBe(401)
    expect((await post(report)).status).toBe(404)
    await db("UPDATE email_recipients SET status = 'delivered' WHERE message_id = $1", [waiting])
    expect((await post(report)).status).toBe(200)
    await eventually(async () => expect((await call("GET", "/suppression/late@inbox.test", keys.a)).body).toMatchObject({ reason: "COMPLAINT" }))
  })

  it("renders templates, escaping values in the html part only", async () => {
    expect((await call("POST", "/templates", keys.a, { name: "welcome", subject: "Hi {{name}}", html: "<p>Hi {{ name }}</p>", text: "Hi {{name}}" })).status).toBe(200)
    const sent = await send(keys.a!, { from: "sender@brand.test", to: ["tpl@inbox.test"], template: { name: "welcome", data: { name: "<b>Bo</b>" } } })
    expect(sent.status).toBe(202)
    const [mail] = await eventually(async () => {
      const messages = await sink("tpl@inbox.test")
      expect(messages).toHaveLength(1)
      return messages
    })
    expect(mail!.html).toBe("<p>Hi &lt;b&gt;Bo&lt;/b&gt;</p>")
    expect(mail!.text?.trim()).toBe("Hi <b>Bo</b>")
    const missing = await send(keys.a!, { from: "sender@brand.test", to: ["tpl@inbox.test"], template: { name: "welcome", data: {} } })
    expect(missing.body).toMatchObject({ code: "invalid_request", errors: [{ path: "template.data" }] })
  })

  it("signs a domain's mail with its DKIM key", async () => {
    await verifyDomain(keys.a!, "acme.test")
    await send(keys.a!, { from: "news@acme.test", to: ["dkim@inbox.test"], subject: "signed", text: "x" })
    const [mail] = await eventually(async () => {
      const messages = await sink("dkim@inbox.test")
      expect(messages).toHaveLength(1)
      return messages
    })
    expect(mail!.headers["dkim-signature"]).toContain("d=acme.test")
  })

  it("posts the events of mail sent with a configuration set to its destinations, signed", async () => {
    const created = await call("POST", "/configuration-sets", keys.a, {
      name: "tracked",
      event_destinations: [{ url: consumer.url("/ok"), events: ["SEND", "DELIVERY"] }]
    })
    expect(created.status).toBe(200)
    const [destination] = created.body.event_destinations
    expect(destination.secret).toMatch(/^whsec_/)
    expect((await call("GET", "/configuration-sets/tracked", keys.a)).body.event_destinations[0].secret).toBeUndefined()
    const sent = (await send(keys.a!, { from: "sender@brand.test", to: ["hooked@inbox.test"], subject: "s", text: "t", configuration_set: "tracked" })).body
    const requests = await eventually(async () => {
      const mine = consumer.received.filter((r) => r.body.includes(sent.message_id))
      expect(mine).toHaveLength(2)
      return mine
    })
    const envelopes = requests.map((r) => new Webhook(destination.secret).verify(r.body, r.headers as Record<string, string>) as any)
    expect(envelopes.map((e) => e.type).sort()).toEqual(["email.delivery", "email.send"])
    for (const e of envelopes) {
      expect(Object.keys(e).sort()).toEqual(["data", "delivery_id", "event_id", "occurred_at", "type"])
      expect(e.data).toMatchObject({ message_id: sent.message_id, event_id: expect.any(String), created_at: expect.any(String) })
    }
    expect((await send(keys.a!, { from: "sender@brand.test", to: ["x@inbox.test"], subject: "s", text: "t", configuration_set: "nope" })).body.errors[0].path).toBe("configuration_set")
  })

  it("paces sends at the partner's rate and refuses a send that would cross the daily quota, whole", async () => {
    await verifyAddress(keys.b!, "me@b.test")
    await verifyDomain(keys.b!, "pace.test")
    await cli("admin", "email-quota", partners.b!, "--daily", "4")
    const sent = await send(keys.b!, { from: "me@b.test", to: ["p1@pace.test", "p2@pace.test", "p3@pace.test"], subject: "paced", text: "x" })
    expect(sent.status).toBe(202)
    const over = await send(keys.b!, { from: "me@b.test", to: ["p4@pace.test", "p5@pace.test"], subject: "over", text: "x" })
    expect(over.status).toBe(429)
    expect(over.body).toMatchObject({ success: false, code: "quota_exceeded" })
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM email_messages WHERE subject = 'over'"))[0]!.n).toBe(0)
    expect((await call("GET", "/quotas", keys.b)).body).toEqual({ success: true, max_24_hour_send: 4, max_send_rate: 1, sent_last_24_hours: 3, production_access_enabled: false })
    const times = await eventually(async () => {
      const all = [...await sink("p1@pace.test"), ...await sink("p2@pace.test"), ...await sink("p3@pace.test")]
      expect(all).toHaveLength(3)
      return all.map((m) => Date.parse(m.received_at)).sort((x, y) => x - y)
    })
    // One recipient a second: the third goes about two seconds after the first.
    expect(times[2]! - times[0]!).toBeGreaterThanOrEqual(1_800)
  })

  it("pages every list by signed cursor: no row repeated or skipped while rows are added, an edited or foreign cursor refused", async () => {
    let n = 0
    const lists: ReadonlyArray<{ readonly path: string; readonly key: string; readonly id: string; readonly add: () => Promise<unknown> }> = [
      { path: "identities", key: "identities", id: "id", add: () => call("POST", "/identities", keys.a, { identity: `walk${n++}.test` }) },
      { path: "configuration-sets", key: "configuration_sets", id: "name", add: () => call("POST", "/configuration-sets", keys.a, { name: `walk${n++}` }) },
      { path: "templates", key: "templates", id: "name", add: () => call("POST", "/templates", keys.a, { name: `walk${n++}`, subject: "s", text: "t" }) },
      { path: "suppression", key: "suppression", id: "email", add: () => call("PUT", `/suppression/walk${n++}@list.test`, keys.a, {}) },
      {
        path: "events",
        key: "events",
        id: "event_id",
        add: () => db("INSERT INTO email_events (partner_id, message_id, type, detail) VALUES ($1, gen_random_uuid(), 'SEND', 'walk')", [partners.a])
      },
      {
        path: "production-access",
        key: "production_access",
        id: "id",
        add: () =>
          db(
            `INSERT INTO email_production_access (partner_id, mail_type, website_url, use_case_description, status) VALUES ($1, 'MARKETING', 'https://w.test', 'walk', 'DENIED')`,
            [partners.a]
          )
      }
    ]
    const page = async (list: (typeof lists)[number], limit: number, cursor?: string, key = keys.a) =>
      (await call("GET", `/${list.path}?limit=${limit}${cursor === undefined ? "" : `&next_cursor=${encodeURIComponent(cursor)}`}`, key)).body
    for (const list of lists) {
      for (let i = 0; i < 7; i++) await list.add()
      const before = new Set((await page(list, 1000))[list.key].map((r: Record<string, string>) => r[list.id]))
      const seen: Array<string> = []
      const added = new Set<string>()
      let cursor: string | undefined
      do {
        const current = await page(list, 3, cursor)
        expect(current.count).toBe(current[list.key].length)
        // The same cursor gives the same rows.
        expect((await page(list, 3, cursor))[list.key]).toEqual(current[list.key])
        seen.push(...current[list.key].map((r: Record<string, string>) => r[list.id]))
        // A row added now sorts before the first page: it must not show up on a later one.
        await list.add()
        const newest = (await page(list, 1))[list.key][0][list.id]
        added.add(newest)
        cursor = current.next_cursor
      } while (cursor !== undefined)
      expect(seen.filter((id, i) => seen.indexOf(id) !== i), `${list.path}: rows repeated`).toEqual([])
      expect([...before].filter((id) => !seen.includes(id as string)), `${list.path}: rows skipped`).toEqual([])
      expect(seen.filter((id) => added.has(id)), `${list.path}: rows added while walking`).toEqual([])
    }

    const first = await page(lists[3]!, 2)
    const edited = first.next_cursor.replace(/^./, (c: string) => (c === "A" ? "B" : "A"))
    expect(await page(lists[3]!, 2, edited)).toMatchObject({ code: "invalid_cursor" })
    expect(await page(lists[3]!, 2, first.next_cursor, keys.b)).toMatchObject({ code: "invalid_cursor" })
    expect(await page(lists[2]!, 2, first.next_cursor)).toMatchObject({ code: "invalid_cursor" })
    expect((await call("GET", "/suppression?limit=1001", keys.a)).body).toMatchObject({ code: "invalid_request" })
    expect((await call("GET", "/suppression?limit=0", keys.a)).status).toBe(400)
    // A cursor of one filter of /events is not another's.
    const sends = (await call("GET", "/events?type=SEND&limit=1", keys.a)).body
    expect((await call("GET", `/events?type=DELIVERY&limit=1&next_cursor=${encodeURIComponent(sends.next_cursor)}`, keys.a)).body).toMatchObject({ code: "invalid_cursor" })
  })

  it("production access: requested, granted by the operator, out of the sandbox with production quotas", async () => {
    const requested = await call("POST", "/production-access", keys.b, { mail_type: "TRANSACTIONAL", website_url: "https://b.test", use_case_description: "receipts" })
    expect(requested.body).toMatchObject({ success: true, status: "PENDING", mail_type: "TRANSACTIONAL" })
    expect((await call("POST", "/production-access", keys.b, { mail_type: "TRANSACTIONAL", website_url: "https://b.test", use_case_description: "again" })).status).toBe(409)
    expect(await cli("admin", "email-production-access", partners.b!, "grant")).toMatchObject({ status: "GRANTED" })
    expect((await call("GET", "/production-access", keys.b)).body.production_access[0]).toMatchObject({ id: requested.body.id, status: "GRANTED" })
    const quotas = (await call("GET", "/quotas", keys.b)).body
    expect(quotas).toMatchObject({ max_24_hour_send: 50_000, max_send_rate: 14, production_access_enabled: true })
    const sent = await send(keys.b!, { from: "me@b.test", to: ["anyone@unverified.test"], subject: "out", text: "x" })
    expect(sent.status).toBe(202)
    expect((await settled(keys.b!, sent.body.message_id)).status).toBe("DELIVERED")
  })
})

it("every event its consumer received is what the API reference's webhooks document (strictly)", () => {
  expect(consumer.received.length).toBeGreaterThan(0)
  expect(consumer.undocumented).toEqual([])
})
