import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { mkdirSync, rmSync, statSync } from "node:fs"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, type BrowserContext, chromium, type Page, type Request } from "playwright-core"
import { generateTotp } from "../../src/security/Totp.ts"
import { eventually, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// The console's pages (docs/console.md) in Debian's Chromium against one `herald serve` node, driven
// as a person drives them: signing in (with two-factor), a broadcast started from the form whose
// progress bar is moved by the live stream alone, a failing webhook endpoint going red and its dead
// letter replayed, an API key shown once, a viewer with nothing to press, CSRF refusals from the
// page and from another site, the operator view behind its token, a screenshot of every page
// (docs/console/*.png), and an accessibility smoke test of every page. The same server side over
// plain HTTP is test/e2e/console-api.test.ts.

const OPS_TOKEN = "ops-token-for-the-console-browser-test-0123456789"
const PASSWORD = "console browser password"
const OWNER = "owner@console-ui.test"
const VIEWER = "viewer@console-ui.test"
const TWOFA = "twofa@console-ui.test"
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
// The docs' screenshots are refreshed only when asked (HERALD_UPDATE_SCREENSHOTS=1): a run of the
// suite leaves the checkout as it found it, and its own shots go to a temporary directory.
const SHOTS = process.env.HERALD_UPDATE_SCREENSHOTS === "1"
  ? fileURLToPath(new URL("../../docs/console/", import.meta.url))
  : join(tmpdir(), `herald-console-shots-${process.pid}`)
const DESKTOP = { width: 1280, height: 800 }
const PHONE = { width: 375, height: 740 }
/** Contacts of the list the console's form broadcasts to: numbers ending 1234, none of the simulator's special endings (0001–0006). */
const CONTACTS = 400

const iso = useIsolation()
let node: HeraldProcess
let browser: Browser
let cli: ReturnType<typeof cliFor>
let ownerToken = ""
let botId = ""
let twofaSecret = ""
let nodeId = ""
/** The broadcast started from the console's form (set by its test, used by the later ones). */
let uiBroadcastId = ""
/** A small broadcast made through REST at set-up: every page has data whatever runs first. */
let restBroadcastId = ""
const hooks = { failing: "", healthy: "" }

/**
 * The webhook consumer: /flaky answers 500 while `flakyFails`, 200 after (so a replay of its dead
 * letter succeeds); everything else 200.
 */
let flakyFails = true
const consumer = http.createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    const fail = req.url?.startsWith("/flaky") === true && flakyFails
    res.writeHead(fail ? 500 : 200, { "content-type": "text/plain" })
    res.end(fail ? "down for maintenance" : "ok")
  })
})

/** Another site's pages: a form that POSTs to the console by itself, and a script that fetches it. */
const attacker = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://attacker")
  const target = url.searchParams.get("to") ?? ""
  const body = JSON.stringify({ name: "forged by another site", scopes: ["contacts:read"] })
  const page = url.pathname === "/form"
    // text/plain: the one encoding that can carry JSON without a preflight.
    ? `<form id="f" method="POST" enctype="text/plain" action="${target}"><input type="hidden" name='${body.slice(0, -1)},"pad":"' value='"}'></form>` +
      `<script>document.getElementById("f").submit()</script>`
    : `<p id="out">…</p><script>fetch(${JSON.stringify(target)}, { method: "POST", mode: "no-cors", credentials: "include", ` +
      `headers: { "content-type": "text/plain" }, body: ${JSON.stringify(body)} }).then(() => { out.textContent = "sent" }, (e) => { out.textContent = "failed: " + e })</script>`
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
  res.end(`<!doctype html><html><head><title>A nice page</title></head><body>${page}</body></html>`)
})

const listen = (server: http.Server, host?: string) =>
  new Promise<number>((resolve) => server.listen(0, ...(host !== undefined ? [host] : []), () => resolve((server.address() as AddressInfo).port)))
let consumerPort = 0
let attackerPort = 0

const rest = (method: string, path: string, body?: unknown, token = ownerToken) => callJson(node.url, method, path, token, body)
const tokenOf = async (email: string) => (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email, password: PASSWORD })).body.token as string
const apiKeys = async () => (await rest("GET", "/api/v1/rcs/api-keys")).body.keys as Array<{ key_id: string; name: string; prefix: string; last_four: string }>

/** A contact list of `count` numbers, imported as CSV. */
const contactList = async (name: string, count: number, first: number) => {
  const list = (await rest("POST", "/api/v1/rcs/contact-lists", { name })).body.list.list_id as string
  const imported = await fetch(`${node.url}/api/v1/rcs/contact-lists/${list}/contacts`, {
    method: "POST",
    headers: { authorization: `Bearer ${ownerToken}`, "content-type": "text/csv" },
    body: "phone\n" + Array.from({ length: count }, (_, i) => `+9198${String(first + i).padStart(4, "0")}1234`).join("\n") + "\n"
  })
  expect(imported.status, await imported.clone().text()).toBe(200)
  return list
}

beforeAll(async () => {
  const env = envFor(iso, { LOG_LEVEL: "warning", GATEWAY_SIM_DELIVERED_MS: "50", GATEWAY_SIM_READ_MS: "100", HERALD_BROADCAST_REPORT_WINDOW_MS: "2000" })
  cli = cliFor(env)
  const launching = chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS }).then((b) => (browser = b))
  ;[node, consumerPort, attackerPort] = await Promise.all([
    startHerald({ ...env, HERALD_OPS_TOKEN: OPS_TOKEN }),
    listen(consumer, "127.0.0.1"),
    // On every address: both 127.0.0.1 (the console's site, another origin) and localhost (another site).
    listen(attacker)
  ])
  await launching
  const account = (await cli("admin", "create-account", "--email", OWNER, "--password", PASSWORD, "--label", "Acme Retail", "--plan", "growth")).account_id as string
  botId = (await cli("admin", "create-bot", account, "--name", "Acme Offers", "--use-case", "promotional", "--status", "active")).bot_id as string
  await cli("admin", "wallet-credit", account, "500")
  ownerToken = await tokenOf(OWNER)

  // The failing endpoint first: its deliveries' retries (1 s, 5 s, 30 s) run while the set-up and
  // the first tests do, so they are dead letters by the time the webhook test looks.
  const hook = async (path: string) =>
    (await rest("POST", "/api/v1/rcs/webhooks", { url: `http://127.0.0.1:${consumerPort}${path}`, events: ["message.failed"], bot_id: botId })).body
      .webhook_id as string
  hooks.failing = await hook("/flaky")
  hooks.healthy = await hook("/ok")
  for (let i = 0; i < 3; i++) {
    expect((await rest("POST", `/api/v1/rcs/webhooks/${hooks.failing}/test`, {})).status).toBe(200)
  }
  for (let i = 0; i < 2; i++) expect((await rest("POST", `/api/v1/rcs/webhooks/${hooks.healthy}/test`, {})).status).toBe(200)

  expect((await rest("POST", "/api/v1/rcs/team", { email: VIEWER, role: "viewer", assigned_bots: ["*"], password: PASSWORD })).status).toBe(200)
  const template = (await rest("POST", "/api/v1/rcs/templates", { bot_id: botId, name: "Spring offer", type: "text", text: "Spring is here: 20% off this week." })).body
    .template_id as string
  await rest("POST", "/api/v1/rcs/templates", { bot_id: botId, name: "Order shipped", type: "text", text: "Your order is on its way." })
  await contactList("Spring customers", CONTACTS, 0)
  const small = await contactList("Store staff", 12, 5000)
  const made = await rest("POST", "/api/v1/rcs/broadcasts", { name: "Staff preview", bot_id: botId, template_id: template, contact_list_id: small })
  expect(made.status, JSON.stringify(made.body)).toBe(200)
  restBroadcastId = made.body.broadcast.id
  expect((await rest("PUT", "/api/v1/app/developer/webhook", { url: `http://127.0.0.1:${consumerPort}/developer` })).status).toBe(200)

  // Someone with two-factor authentication on.
  await cli("admin", "create-account", "--email", TWOFA, "--password", PASSWORD, "--label", "Twofa Ltd")
  const twofaToken = await tokenOf(TWOFA)
  twofaSecret = (await rest("POST", "/api/v1/rcs/auth/2fa/setup", {}, twofaToken)).body.secret
  expect((await rest("POST", "/api/v1/rcs/auth/2fa/enable", { totp_code: generateTotp(twofaSecret) }, twofaToken)).status).toBe(200)

  const cluster = await fetch(`${node.url}/console/api/ops/cluster`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })
  nodeId = ((await cluster.json()) as any).nodes[0].node_id
  mkdirSync(SHOTS, { recursive: true })
})

const contexts: Array<BrowserContext> = []

afterAll(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => undefined)))
  await browser?.close()
  await node?.kill()
  consumer.closeAllConnections()
  attacker.closeAllConnections()
  await Promise.all([new Promise((r) => consumer.close(r)), new Promise((r) => attacker.close(r))])
  if (process.env.HERALD_UPDATE_SCREENSHOTS !== "1") rmSync(SHOTS, { recursive: true, force: true })
}, 60_000)

// Helpers.

const newPage = async (options: Parameters<Browser["newContext"]>[0] = {}) => {
  const context = await browser.newContext({ viewport: DESKTOP, ...options })
  contexts.push(context)
  return { context, page: await context.newPage() }
}

const h1 = (page: Page, name: string | RegExp) => page.getByRole("heading", { level: 1, name })

/** Through the sign-in form, as a person: e-mail, password, the button. */
const signIn = async (page: Page, email: string) => {
  await page.goto(`${node.url}/console`)
  await h1(page, "Sign in to the Herald console").waitFor()
  await page.getByLabel("E-mail").fill(email)
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD)
  await page.getByRole("button", { name: "Sign in", exact: true }).click()
  await h1(page, "Overview").waitFor()
}

const signedIn = async (email: string, options: Parameters<Browser["newContext"]>[0] = {}) => {
  const opened = await newPage(options)
  await signIn(opened.page, email)
  return opened
}

/** The signed-in pages, by their navigation links. */
const PAGES = [
  { nav: "Overview", path: "/console", heading: "Overview" },
  { nav: "Broadcasts", path: "/console/broadcasts", heading: "Broadcasts" },
  { nav: "Webhooks", path: "/console/webhooks", heading: "Webhooks" },
  { nav: "Templates", path: "/console/templates", heading: "Templates" },
  { nav: "Team and API keys", path: "/console/team", heading: "Team and API keys" },
  { nav: "Developer settings", path: "/console/settings/developer", heading: "Developer settings" }
] as const

const settled = async (page: Page) => {
  // Every "Loading …" status gone.
  await expect.poll(() => page.getByRole("status").filter({ hasText: /^Loading/ }).count(), { timeout: 20_000 }).toBe(0)
}

/** A page of the console through its navigation, waiting until it has read what it shows. */
const goTo = async (page: Page, nav: string, heading: string) => {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: nav, exact: true }).click()
  await h1(page, heading).waitFor()
  await settled(page)
}

const shoot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) })

/** The tables whose box scrolls sideways (fine on a phone, not at desktop width). */
const overflowing = (page: Page) =>
  page.evaluate<Array<string>>(`[...document.querySelectorAll(".table-wrap")]
    .filter((box) => box.scrollWidth > box.clientWidth + 1).map((box) => box.getAttribute("aria-label"))`)

/** What the page holds, every attribute and text included. */
const dom = (page: Page) => page.evaluate<string>("document.documentElement.outerHTML")

describe("the console in Chromium", () => {
  it("signs in through the form; a wrong password is told; with two-factor on, the code field appears and the code signs in", async () => {
    const { page } = await newPage()
    await page.goto(`${node.url}/console/broadcasts`)
    // Not signed in: the sign-in page, which will come back here.
    await h1(page, "Sign in to the Herald console").waitFor()
    // The form shows as soon as the session reads signed out; the address follows in the effect
    // after that render (app.tsx), so it is waited for rather than read once.
    await expect.poll(() => new URL(page.url()).pathname + new URL(page.url()).search).toBe(`/console/sign-in?next=${encodeURIComponent("/console/broadcasts")}`)

    await page.getByLabel("E-mail").fill(TWOFA)
    await page.getByLabel("Password", { exact: true }).fill("not the password at all")
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    const error = page.getByTestId("sign-in-error")
    await error.waitFor()
    expect(await error.innerText()).toMatch(/invalid e-mail or password/i)
    expect(await page.getByLabel("Two-factor code").count()).toBe(0)

    await page.getByLabel("Password", { exact: true }).fill(PASSWORD)
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    const code = page.getByRole("textbox", { name: "Two-factor code" })
    await code.waitFor()
    expect(await error.count()).toBe(0)
    // The code field has the focus, the e-mail and password stay as typed.
    await expect.poll(() => code.evaluate((e) => e === (globalThis as any).document.activeElement)).toBe(true)
    expect(await page.getByLabel("E-mail").inputValue()).toBe(TWOFA)
    await page.keyboard.type(generateTotp(twofaSecret))
    await page.keyboard.press("Enter")
    await h1(page, "Broadcasts").waitFor()
    expect(new URL(page.url()).pathname).toBe("/console/broadcasts")
    await expect.poll(() => page.locator(".person-email").innerText()).toBe(TWOFA)
    expect(await page.locator(".account-label").innerText()).toBe("Twofa Ltd")

    // Signing out takes the person back to the form.
    await page.getByRole("button", { name: "Sign out" }).click()
    await h1(page, "Sign in to the Herald console").waitFor()
    await page.getByText("You are signed out.").waitFor()
  }, 300_000)

  it("starts a broadcast from the form and watches its progress bar reach 100%, pushed by the live stream, never polled", async () => {
    const { page } = await newPage()
    const requests: Array<{ readonly at: number; readonly method: string; readonly url: string }> = []
    page.on("request", (r: Request) => requests.push({ at: Date.now(), method: r.method(), url: r.url() }))
    await signIn(page, OWNER)
    await goTo(page, "Broadcasts", "Broadcasts")
    await page.getByText("Live updates: on").waitFor()

    await page.getByRole("button", { name: "New broadcast" }).click()
    await page.getByRole("textbox", { name: "Name" }).fill("Spring sale")
    await page.getByLabel("Bot").selectOption({ label: "Acme Offers" })
    await page.getByLabel("Template").selectOption({ label: "Spring offer (text)" })
    await page.getByLabel("Contact list").selectOption({ label: `Spring customers (${CONTACTS} contacts)` })
    expect(await page.getByRole("radio", { name: "Now" }).isChecked()).toBe(true)

    // Every value the bar takes, as the page renders it.
    await page.evaluate(`(() => {
      window.__bars = []
      new MutationObserver(() => {
        for (const bar of document.querySelectorAll('[data-testid^="progress-"]')) {
          window.__bars.push([bar.dataset.testid, Number(bar.getAttribute("aria-valuenow")), Number(bar.getAttribute("aria-valuemax"))])
        }
      }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["aria-valuenow", "aria-valuemax"] })
    })()`)
    const [created] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${node.url}/console/api/v1/rcs/broadcasts` && r.request().method() === "POST"),
      page.getByRole("button", { name: "Start the broadcast" }).click()
    ])
    expect(created.status()).toBe(200)
    const startedAt = Date.now()
    const id = ((await created.json()) as any).broadcast.id as string
    uiBroadcastId = id
    await page.getByText("Broadcast “Spring sale” created").waitFor()

    const bar = page.getByTestId(`progress-${id}`)
    const counters = page.getByTestId(`counters-${id}`)
    await expect.poll(() => counters.getAttribute("data-status"), { timeout: 90_000, interval: 200 }).toBe("completed")
    await expect.poll(() => bar.getAttribute("aria-valuenow"), { timeout: 10_000 }).toBe(String(CONTACTS))
    expect(await bar.getAttribute("aria-valuemax")).toBe(String(CONTACTS))
    expect(await page.getByRole("row").filter({ has: bar }).getByText(`${CONTACTS} of ${CONTACTS} (100%)`).isVisible()).toBe(true)

    // The counters the page shows are the broadcast's, as the REST API has them once completed.
    const broadcast = (await rest("GET", `/api/v1/rcs/broadcasts/${id}`)).body.broadcast
    expect(broadcast).toMatchObject({ status: "completed", total_count: CONTACTS })
    expect({
      total: Number(await counters.getAttribute("data-total")),
      sent: Number(await counters.getAttribute("data-sent")),
      failed: Number(await counters.getAttribute("data-failed"))
    }).toEqual({ total: broadcast.total_count, sent: broadcast.sent_count, failed: broadcast.failed_count })
    expect(broadcast.sent_count + broadcast.failed_count).toBe(CONTACTS)

    // Moved by the stream: the bar went through values on its way, while the page read nothing of
    // the broadcast (the live stream, opened before, was the only thing open).
    const seen = ((await page.evaluate("window.__bars")) as Array<[string, number, number]>).filter(([testId]) => testId === `progress-${id}`)
    const values = [...new Set(seen.map(([, now]) => now))]
    expect(values.at(-1)).toBe(CONTACTS)
    expect(values.some((v) => v > 0 && v < CONTACTS), `the bar's values: ${values.join(", ")}`).toBe(true)
    for (let i = 1; i < values.length; i++) expect(values[i]!).toBeGreaterThan(values[i - 1]!)
    const after = requests.filter((r) => r.at >= startedAt)
    expect(after.filter((r) => r.method === "GET" && r.url.includes("/console/api/v1/rcs/broadcasts")), JSON.stringify(after)).toEqual([])
    expect(after.filter((r) => r.url.startsWith(`${node.url}/console/api/`))).toEqual([])
    expect(requests.filter((r) => r.url === `${node.url}/console/api/live`)).toHaveLength(1)

    // Its page: the same counters, its targets.
    await page.getByRole("link", { name: "Spring sale" }).click()
    await h1(page, "Spring sale").waitFor()
    await expect.poll(() => page.getByTestId(`counters-${id}`).getAttribute("data-sent")).toBe(String(broadcast.sent_count))
    await page.getByTestId("targets").getByRole("row").nth(1).waitFor()
    expect(await page.getByTestId("cancel-broadcast").count()).toBe(0)
  }, 180_000)

  it("creates an API key: shown exactly once, copied by the Copy button, gone from the page once put away", async () => {
    const { context, page } = await signedIn(OWNER)
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: node.url })
    await goTo(page, "Team and API keys", "Team and API keys")
    const before = await apiKeys()

    await page.getByRole("button", { name: "Create API key" }).click()
    await page.getByRole("textbox", { name: "Name" }).fill("Order sync")
    await page.getByRole("checkbox", { name: "contacts:read" }).check()
    await page.getByRole("checkbox", { name: "broadcasts:read" }).check()
    await page.getByRole("button", { name: "Create the key" }).click()
    const shown = page.getByTestId("new-api-key")
    await shown.waitFor()
    const raw = (await shown.innerText()).trim()
    expect(raw).toMatch(/^rcs_pk_live_\S+$/)

    // The REST API lists it by its prefix and last four characters only.
    const after = await apiKeys()
    expect(after).toHaveLength(before.length + 1)
    const made = after.find((k) => k.name === "Order sync")!
    expect(raw.startsWith(made.prefix)).toBe(true)
    expect(raw.endsWith(made.last_four)).toBe(true)
    expect(JSON.stringify(after)).not.toContain(raw)
    const row = page.getByTestId(`api-key-${made.key_id}`)
    expect(await row.innerText()).toContain(`${made.prefix}…${made.last_four}`)
    // Exactly once in the page.
    expect((await dom(page)).split(raw)).toHaveLength(2)

    await page.getByRole("button", { name: "Copy" }).click()
    await page.getByText("Copied to the clipboard.").waitFor()
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(raw)

    await page.getByRole("button", { name: "I have stored it: hide it" }).click()
    await expect.poll(() => shown.count()).toBe(0)
    expect(await dom(page)).not.toContain(raw)
    expect(await row.innerText()).toContain(`${made.prefix}…${made.last_four}`)
    await page.reload()
    await h1(page, "Team and API keys").waitFor()
    await settled(page)
    await row.waitFor()
    expect(await dom(page)).not.toContain(raw)
    expect(await page.evaluate<string>("JSON.stringify(localStorage) + JSON.stringify(sessionStorage)")).not.toContain(raw)
  }, 300_000)

  it("a viewer: every page, and no enabled control that changes something; a forged write from the page is refused and writes nothing", async () => {
    const { page } = await signedIn(VIEWER)
    expect(await page.locator(".badge-role").innerText()).toMatch(/Viewer/)
    /** Controls that only read or move around. */
    const reading = /^(Sign out|Menu|Load more|Loading…|Refresh|Try again|Show attempts|Hide attempts)\b/
    const controls = () =>
      page.evaluate<Array<{ id: string; name: string; disabled: boolean }>>(`[...document.querySelectorAll("button, input, select, textarea")]
        .filter((e) => e.type !== "hidden")
        .map((e) => ({ id: e.id, name: (e.labels?.[0]?.innerText ?? e.innerText ?? e.getAttribute("aria-label") ?? "").trim(), disabled: e.disabled || e.readOnly }))`)
    const mustBeOff: Record<string, ReadonlyArray<string>> = {
      Broadcasts: ["New broadcast"],
      "Team and API keys": ["Add member", "Remove"],
      "Developer settings": ["Generate a new secret key"]
    }
    const check = async (where: string) => {
      const all = await controls()
      const writing = all.filter((c) => !reading.test(c.name) && c.id !== "target-status")
      expect(writing.filter((c) => !c.disabled), `${where}: ${JSON.stringify(writing)}`).toEqual([])
      for (const name of mustBeOff[where] ?? []) expect(writing.some((c) => c.name.startsWith(name)), `${where} shows ${name}, disabled`).toBe(true)
      expect(all.some((c) => c.name === "Sign out" && !c.disabled)).toBe(true)
    }
    for (const { nav, heading } of PAGES) {
      await goTo(page, nav, heading)
      await check(nav)
    }
    // What the viewer may not read is said, not shown.
    await goTo(page, "Webhooks", "Webhooks")
    await page.getByText("Dead letters are shown to operators and the owner.").waitFor()
    expect(await page.locator('[data-testid^="replay-"]').count()).toBe(0)
    await goTo(page, "Team and API keys", "Team and API keys")
    await page.getByText("The API keys are shown to the account's owner only.").waitFor()
    // A broadcast's page: the counters, no Cancel.
    await goTo(page, "Broadcasts", "Broadcasts")
    await page.getByRole("link", { name: "Staff preview" }).click()
    await h1(page, "Staff preview").waitFor()
    await settled(page)
    await check("a broadcast")
    const cancel = page.getByTestId("cancel-broadcast")
    if ((await cancel.count()) > 0) expect(await cancel.isDisabled()).toBe(true)

    // Forged from the page, with the session's own CSRF token: the REST API's role check refuses.
    const keys = (await apiKeys()).length
    const lists = (await rest("GET", "/api/v1/rcs/contact-lists?limit=1000")).body.lists.length
    const forged = await page.evaluate(async (broadcastId) => {
      const g = globalThis as any
      const session = await (await g.fetch("/console/api/session")).json()
      const post = async (path: string, body: unknown) => {
        const r = await g.fetch(path, {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": session.csrf_token },
          body: JSON.stringify(body)
        })
        return { status: r.status as number, body: await r.json() }
      }
      return {
        role: session.session.role as string,
        csrf: typeof session.csrf_token,
        key: await post("/console/api/v1/rcs/api-keys", { name: "viewer's key", scopes: ["contacts:read"] }),
        list: await post("/console/api/v1/rcs/contact-lists", { name: "viewer's list" }),
        broadcast: await post(`/console/api/v1/rcs/broadcasts/${broadcastId}/cancel`, {})
      }
    }, restBroadcastId)
    expect(forged.role).toBe("viewer")
    expect(forged.csrf).toBe("string")
    for (const answer of [forged.key, forged.list, forged.broadcast]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(403)
      expect(answer.body.code).not.toBe("csrf_failed")
    }
    expect((await apiKeys()).length).toBe(keys)
    expect((await rest("GET", "/api/v1/rcs/contact-lists?limit=1000")).body.lists.length).toBe(lists)
    expect((await apiKeys()).some((k) => k.name === "viewer's key")).toBe(false)
  }, 180_000)

  it("refuses a write without the CSRF token from the console's own page, and any write from another site's page", async () => {
    const { context, page } = await signedIn(OWNER)
    const keys = (await apiKeys()).length
    const missing = await page.evaluate(async () => {
      const r = await (globalThis as any).fetch("/console/api/v1/rcs/api-keys", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "no token", scopes: ["contacts:read"] })
      })
      return { status: r.status as number, body: await r.json() }
    })
    expect(missing.status).toBe(403)
    expect(missing.body).toMatchObject({ success: false, code: "csrf_failed" })

    // Another site's page in the same browser, while the person is signed in to the console.
    const target = `${node.url}/console/api/v1/rcs/api-keys`
    const attempt = async (origin: string, kind: "form" | "fetch") => {
      const other = await context.newPage()
      try {
        const [answer] = await Promise.all([
          other.waitForResponse((r) => r.url() === target && r.request().method() === "POST"),
          other.goto(`${origin}/${kind}?to=${encodeURIComponent(target)}`)
        ])
        const headers = await answer.request().allHeaders()
        return { status: answer.status(), cookie: headers.cookie ?? "", origin: headers.origin }
      } finally {
        await other.close()
      }
    }
    // localhost is another site: the SameSite=Strict cookie is not sent, so nobody is signed in.
    for (const kind of ["form", "fetch"] as const) {
      const r = await attempt(`http://localhost:${attackerPort}`, kind)
      expect(r.cookie, kind).not.toContain("herald_session")
      expect(r.status, kind).toBe(401)
    }
    // 127.0.0.1 on another port is the same site (the cookie goes) but another origin: refused.
    for (const kind of ["form", "fetch"] as const) {
      const r = await attempt(`http://127.0.0.1:${attackerPort}`, kind)
      if (kind === "form") expect(r.origin, kind).toBe(`http://127.0.0.1:${attackerPort}`)
      expect(r.status, kind).toBe(403)
    }
    const after = await apiKeys()
    expect(after.length).toBe(keys)
    expect(after.some((k) => /forged|no token/.test(k.name))).toBe(false)
  }, 300_000)

  it("the operator view: the token form without the token, an error for a wrong one, the cluster with the right one", async () => {
    const { page } = await newPage()
    await page.goto(`${node.url}/console/ops`)
    await h1(page, "Cluster").waitFor()
    const token = page.getByRole("textbox", { name: "Operator token" })
    await token.waitFor()
    expect(await page.getByTestId("ops-cluster").count()).toBe(0)
    expect(await dom(page)).not.toContain(nodeId)

    await token.fill("not-the-token-but-long-enough-0123456789")
    await page.getByRole("button", { name: "Open the operator view" }).click()
    await page.getByText(/not the node's HERALD_OPS_TOKEN/).waitFor()
    expect(await page.getByTestId("ops-cluster").count()).toBe(0)
    expect(await dom(page)).not.toContain(nodeId)

    await token.fill(OPS_TOKEN)
    await page.getByRole("button", { name: "Open the operator view" }).click()
    const cluster = page.getByTestId("ops-cluster")
    await cluster.waitFor()
    const expected = (await (await fetch(`${node.url}/console/api/ops/cluster`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })).json()) as any
    const nodes = cluster.getByRole("region", { name: "Nodes table" })
    const nodeRow = nodes.getByRole("row").filter({ hasText: nodeId })
    await nodeRow.waitFor()
    expect(await nodeRow.getByRole("cell").first().innerText()).toBe("all")
    expect(expected.kinds.length).toBeGreaterThan(0)
    for (const kind of expected.kinds as Array<any>) {
      const partitions = cluster.getByRole("list", { name: `Partitions of ${kind.kind}` }).getByRole("listitem")
      expect(await partitions.count(), kind.kind).toBe(expected.partitions_per_kind)
      const owners = await partitions.locator(".partition-owner").allInnerTexts()
      expect(owners.every((o) => nodeId.startsWith(o.replace(/…$/, ""))), `${kind.kind}: ${owners.join(", ")}`).toBe(true)
      const section = cluster.locator("section.kind").filter({ has: page.getByRole("heading", { name: kind.kind, exact: true }) })
      expect(await section.locator(".backlog dt").allInnerTexts()).toEqual(["Pending", "Ack pending", "Redelivered"])
    }
    await cluster.getByRole("heading", { name: "Poison messages" }).waitFor()
    await cluster.getByText("No poison messages.").waitFor()

    // Off on a node without HERALD_OPS_TOKEN, where the node answers 404 (the server side of that is
    // console-api.test.ts's; here the page's telling of it).
    const { page: off } = await newPage()
    await off.route(`${node.url}/console/api/ops/session`, (route) =>
      route.fulfill({
        status: 404,
        contentType: "application/json",
        body: JSON.stringify({ success: false, code: "not_found", message: "the operator view is off on this node: HERALD_OPS_TOKEN is not set" })
      }))
    await off.goto(`${node.url}/console/ops`)
    await off.getByTestId("ops-off").waitFor()
    expect(await off.getByRole("textbox", { name: "Operator token" }).count()).toBe(0)
  }, 300_000)

  it("a failing endpoint goes red; its dead letter, replayed from the page once the endpoint is back, leaves the list as a new delivery", async () => {
    const { page } = await signedIn(OWNER)
    await goTo(page, "Webhooks", "Webhooks")
    const badge = page.getByTestId(`health-${hooks.failing}`)
    await expect.poll(() => badge.getAttribute("data-health"), { timeout: 30_000 }).toBe("failing")
    expect(await badge.innerText()).toBe("Failing")
    expect(await page.getByTestId(`health-${hooks.healthy}`).getAttribute("data-health")).toBe("healthy")
    expect(await page.getByTestId(`health-${hooks.healthy}`).innerText()).toBe("Healthy")
    // Its attempts, when asked for: 500s.
    await page.getByRole("button", { name: `Show attempts of http://127.0.0.1:${consumerPort}/flaky` }).click()
    await page.locator(`#attempts-${hooks.failing}`).getByText("500").first().waitFor()

    // Four attempts (1 s, 5 s and 30 s apart), started at set-up: dead letters by now or soon.
    const letters = await eventually(async () => {
      const items = ((await rest("GET", "/api/v1/rcs/webhooks/dead-letter")).body.items as Array<any>).filter((i) => i.webhook_id === hooks.failing)
      expect(items.length).toBeGreaterThan(0)
      return items
    }, { timeoutMs: 90_000, intervalMs: 1_000 })
    const letter = letters[0]!.delivery_id as string
    expect(letter).toMatch(/^wd_/)
    await page.reload()
    await h1(page, "Webhooks").waitFor()
    await settled(page)
    const row = page.getByTestId(`dead-letter-${letter}`)
    await row.waitFor()
    expect(await row.innerText()).toContain("HTTP 500 after 4 attempts")

    // The endpoint is back; the replay goes through.
    flakyFails = false
    await page.getByTestId(`replay-${letter}`).click()
    // A confirmation, when the page asks for one.
    const confirmOk = page.getByTestId("confirm-ok")
    const told = page.locator("#replay-result").getByText(/^Replayed as wd_/)
    await confirmOk.or(told).first().waitFor()
    if (await confirmOk.isVisible()) await confirmOk.click()
    await told.waitFor()
    const newId = /Replayed as (wd_\S+)/.exec(await told.innerText())![1]!
    expect(newId).not.toBe(letter)
    await expect.poll(() => row.count()).toBe(0)

    const left = (await rest("GET", "/api/v1/rcs/webhooks/dead-letter")).body.items as Array<any>
    expect(left.map((i) => i.delivery_id)).not.toContain(letter)
    await eventually(async () => {
      const attempts = (await rest("GET", `/api/v1/rcs/webhooks/${hooks.failing}/deliveries?limit=100`)).body.deliveries as Array<any>
      expect(attempts.filter((a) => a.delivery_id === newId).map((a) => a.status_code)).toEqual([200])
    }, { timeoutMs: 30_000, intervalMs: 500 })
    flakyFails = true
  }, 180_000)

  it("screenshots of every page at 1280×800, and the overview and broadcasts at phone width without sideways scrolling", async () => {
    const { page: signInPage } = await newPage()
    await signInPage.goto(`${node.url}/console`)
    await h1(signInPage, "Sign in to the Herald console").waitFor()
    await shoot(signInPage, "sign-in")

    const { page } = await signedIn(OWNER)
    await page.getByText("Live updates: on").waitFor()
    await expect.poll(async () => Number(await page.getByTestId("messages-today").innerText()), { timeout: 30_000 }).toBeGreaterThan(0)
    await shoot(page, "overview")
    expect(await overflowing(page), "overview").toEqual([])
    await goTo(page, "Broadcasts", "Broadcasts")
    await page.getByTestId(`broadcast-${uiBroadcastId}`).waitFor()
    await shoot(page, "broadcasts")
    expect(await overflowing(page), "broadcasts").toEqual([])
    await page.getByRole("link", { name: "Spring sale" }).click()
    await h1(page, "Spring sale").waitFor()
    await page.getByTestId("targets").waitFor()
    await settled(page)
    await shoot(page, "broadcast")
    expect(await overflowing(page), "broadcast").toEqual([])
    await goTo(page, "Webhooks", "Webhooks")
    await page.getByTestId(`health-${hooks.failing}`).waitFor()
    await page.getByRole("region", { name: "Dead letters table" }).waitFor()
    await shoot(page, "webhooks")
    expect(await overflowing(page), "webhooks").toEqual([])
    await goTo(page, "Templates", "Templates")
    await page.getByRole("rowheader", { name: "Spring offer" }).waitFor()
    await shoot(page, "templates")
    expect(await overflowing(page), "templates").toEqual([])
    await goTo(page, "Team and API keys", "Team and API keys")
    await page.getByRole("rowheader", { name: "Order sync" }).waitFor()
    await shoot(page, "team")
    expect(await overflowing(page), "team").toEqual([])
    await goTo(page, "Developer settings", "Developer settings")
    await page.getByTestId("developer-webhook-url").waitFor()
    await shoot(page, "developer")
    expect(await overflowing(page), "developer").toEqual([])
    await page.goto(`${node.url}/console/ops`)
    await page.getByRole("textbox", { name: "Operator token" }).fill(OPS_TOKEN)
    await page.getByRole("button", { name: "Open the operator view" }).click()
    await page.getByTestId("ops-cluster").waitFor()
    await shoot(page, "ops")
    expect(await overflowing(page), "ops").toEqual([])

    const { page: phone } = await signedIn(OWNER, { viewport: PHONE, isMobile: true, hasTouch: true })
    const noSideways = () => phone.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth")
    await phone.getByTestId("hour-chart").waitFor()
    expect(await noSideways(), "the overview scrolls sideways").toBe(true)
    await shoot(phone, "overview-phone")
    // The navigation folds into the menu button.
    const menu = phone.getByRole("button", { name: "Menu" })
    expect(await menu.isVisible()).toBe(true)
    await menu.click()
    await goTo(phone, "Broadcasts", "Broadcasts")
    await phone.getByTestId(`broadcast-${uiBroadcastId}`).waitFor()
    expect(await noSideways(), "the broadcasts page scrolls sideways").toBe(true)
    await shoot(phone, "broadcasts-phone")

    for (const name of ["sign-in", "overview", "broadcasts", "broadcast", "webhooks", "templates", "team", "developer", "ops", "overview-phone", "broadcasts-phone"]) {
      expect(statSync(join(SHOTS, `${name}.png`)).mtimeMs, name).toBeGreaterThan(Date.now() - 180_000)
    }
  }, 180_000)

  it("accessibility smoke: the skip link first, every control named, no console error, no CSP violation, nothing from elsewhere", async () => {
    const problems: Array<string> = []
    const requests: Array<string> = []
    const watch = async (context: BrowserContext) => {
      await context.exposeBinding("__cspViolation", (source, text: string) => problems.push(`CSP on ${source.page.url()}: ${text}`))
      await context.addInitScript(
        `document.addEventListener("securitypolicyviolation", (e) => window.__cspViolation(e.violatedDirective + " " + e.blockedURI))`
      )
      context.on("request", (r) => requests.push(r.url()))
      context.on("page", (p) => {
        p.on("console", (m) => {
          if (m.type() === "error") problems.push(`console ${m.type()} on ${p.url()}: ${m.text()}`)
        })
        p.on("pageerror", (e) => problems.push(`page error on ${p.url()}: ${e.message}`))
      })
    }
    const unnamed = async (page: Page) =>
      (await page.locator("body").ariaSnapshot()).split("\n")
        .filter((line) => /^\s*- (textbox|combobox|checkbox|radio|button|spinbutton|searchbox|slider|switch|listbox|link)\b(?! ")/.test(line))
    const skipLinkFirst = async (page: Page, where: string) => {
      // The first element the Tab key reaches in the document's order.
      expect(
        await page.evaluate<string>(`[...document.querySelectorAll("a[href], button, input, select, textarea, [tabindex]")]
          .find((e) => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length > 0)?.textContent.trim()`),
        where
      ).toBe("Skip to main content")
      await page.keyboard.press("Tab")
      expect(await page.evaluate<string>("document.activeElement.textContent.trim()"), where).toBe("Skip to main content")
      await page.keyboard.press("Enter")
      await expect.poll(() => page.evaluate<string>("document.activeElement.id"), { message: where }).toBe("main")
      expect(await page.getByRole("main").count(), where).toBe(1)
    }

    // Signed out: the sign-in page.
    const anonymous = await browser.newContext({ viewport: DESKTOP })
    contexts.push(anonymous)
    await watch(anonymous)
    const first = await anonymous.newPage()
    await first.goto(`${node.url}/console/sign-in`)
    await h1(first, "Sign in to the Herald console").waitFor()
    await skipLinkFirst(first, "sign-in")
    expect(await unnamed(first)).toEqual([])
    await first.getByRole("textbox", { name: "E-mail" }).waitFor()
    await first.getByRole("textbox", { name: "Password" }).waitFor()

    const context = await browser.newContext({ viewport: DESKTOP })
    contexts.push(context)
    await watch(context)
    const page = await context.newPage()
    await signIn(page, OWNER)
    const paths = [...PAGES.map((p) => [p.path, p.heading] as const), [`/console/broadcasts/${uiBroadcastId}`, "Spring sale"] as const]
    for (const [path, heading] of paths) {
      await page.goto(`${node.url}${path}`)
      await h1(page, heading).waitFor()
      await settled(page)
      await skipLinkFirst(page, path)
      expect(await unnamed(page), path).toEqual([])
    }
    // The forms, open: each field found by its name.
    await page.goto(`${node.url}/console/broadcasts`)
    await settled(page)
    await page.getByRole("button", { name: "New broadcast" }).click()
    for (const name of ["Name", "Bot", "Template", "Contact list"]) await page.getByLabel(name, { exact: true }).waitFor()
    await page.getByRole("radio", { name: "Now" }).waitFor()
    await page.getByRole("radio", { name: "At a set time" }).waitFor()
    expect(await unnamed(page)).toEqual([])
    await page.goto(`${node.url}/console/team`)
    await settled(page)
    await page.getByRole("button", { name: "Add member" }).click()
    await page.getByRole("textbox", { name: "E-mail" }).waitFor()
    await page.getByRole("combobox", { name: "Role" }).waitFor()
    await page.getByLabel("Password (for a new user)").waitFor()
    await page.getByRole("button", { name: "Create API key" }).click()
    await page.getByRole("textbox", { name: "Name" }).waitFor()
    await page.getByLabel("Expires on (optional)").waitFor()
    expect(await page.getByRole("group", { name: "Scopes" }).getByRole("checkbox").count()).toBeGreaterThan(1)
    expect(await unnamed(page)).toEqual([])
    await page.goto(`${node.url}/console/settings/developer`)
    await settled(page)
    await page.getByRole("textbox", { name: "New URL" }).waitFor()
    // The operator view.
    await page.goto(`${node.url}/console/ops`)
    await h1(page, "Cluster").waitFor()
    // The token field takes the focus at once (it is in main); the skip link is still the first tab stop.
    const tokenField = page.getByRole("textbox", { name: "Operator token" })
    await expect.poll(() => tokenField.evaluate((e) => e === (globalThis as any).document.activeElement)).toBe(true)
    await page.keyboard.press("Shift+Tab")
    await page.keyboard.press("Shift+Tab")
    await page.keyboard.press("Shift+Tab")
    expect(await page.evaluate<string>("document.activeElement.textContent.trim()")).toBe("Skip to main content")
    await page.keyboard.press("Enter")
    await expect.poll(() => page.evaluate<string>("document.activeElement.id")).toBe("main")
    await page.getByRole("textbox", { name: "Operator token" }).fill(OPS_TOKEN)
    await page.getByRole("button", { name: "Open the operator view" }).click()
    await page.getByTestId("ops-cluster").waitFor()
    expect(await unnamed(page)).toEqual([])

    expect(problems).toEqual([])
    const origin = new URL(node.url).origin
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([])
    expect(requests.length).toBeGreaterThan(20)
  }, 180_000)
  it("an invitation: the owner invites a person who has a Herald user, who sees it on the team page and accepts it", async () => {
    const INVITEE = "invitee@console.test"
    await cli("admin", "create-account", "--email", INVITEE, "--password", PASSWORD, "--label", "Invitee Shop")
    const owner = await signedIn(OWNER)
    await goTo(owner.page, "Team and API keys", "Team and API keys")
    await owner.page.getByRole("button", { name: "Add member" }).click()
    await owner.page.getByRole("textbox", { name: "E-mail" }).fill(INVITEE)
    await owner.page.getByRole("button", { name: "Add the member" }).click()
    await owner.page.getByText(`${INVITEE} already has a Herald user and was invited`).waitFor()
    const invited = ((await rest("GET", "/api/v1/rcs/team")).body.members as Array<{ member_id: string; email: string; status: string }>).find((m) => m.email === INVITEE)!
    expect(invited.status).toBe("invited")
    const row = owner.page.getByTestId(`member-${invited.member_id}`)
    await row.getByText("Invited").waitFor()
    await row.getByRole("button", { name: `Withdraw ${INVITEE}` }).waitFor()

    // The invitee signs in as before (their own account, no choice) and answers on the team page.
    const invitee = await signedIn(INVITEE)
    await goTo(invitee.page, "Team and API keys", "Team and API keys")
    const invitation = invitee.page.getByTestId(`invitation-${invited.member_id}`)
    await invitation.getByRole("rowheader", { name: "Acme Retail" }).waitFor()
    await invitation.getByRole("button", { name: "Accept Acme Retail" }).click()
    await invitee.page.getByText("You joined Acme Retail as operator.").waitFor()
    expect(await invitation.count()).toBe(0)
    expect(((await rest("GET", "/api/v1/rcs/team")).body.members as Array<{ email: string; status: string }>).find((m) => m.email === INVITEE)!.status).toBe("active")
  }, 120_000)
})
