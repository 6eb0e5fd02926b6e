import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { type Browser, chromium } from "playwright-core"
import { useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { cliFor, ownerSession } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// GET /graphql/playground (src/graphql/playground): GraphiQL served by Herald from the installed
// packages, then driven in Chromium: the account's secret key typed into the headers panel, a query
// run with the run button, the answer (the account's label, which only the server knows) in the
// result panel; then a subscription over the page's WebSocket receives a payment made meanwhile; no
// request leaves the origin and the console has no error.

const iso = useIsolation()
let node: HeraldProcess
let browser: Browser
let key = ""
let simUrl = ""
let numberId = ""
// Only the server can put this in the result panel: it is nowhere in the page or its scripts.
const label = `playground-${randomBytes(6).toString("hex")}`

const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  const env = envFor(iso, { LOG_LEVEL: "warning", GATEWAY_SIM_PORT: String(simPort) })
  node = await startHerald(env)
  const account = (await cliFor(env)("admin", "create-account", "--email", "owner@playground.io", "--password", "owner password", "--label", label, "--plan", "enterprise")).account_id
  numberId = (await cliFor(env)("admin", "create-wa-number", account, "--phone", "+919800000601")).phone_number_id
  ;[key, browser] = await Promise.all([
    ownerSession(node.url, "owner@playground.io", "owner password").then((s) => s.key),
    chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS })
  ])
  expect(key).toMatch(/^sk_live_/)
}, 300_000)
afterAll(async () => {
  await browser?.close()
  await node?.kill()
})

const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="(\/graphql\/playground\/assets\/[^"]+)"/g)].map((m) => m[1]!)

describe("GraphQL playground", () => {
  it("serves the page and every asset itself: CSP, nosniff, hashed names cached for a year, no CORS", async () => {
    const res = await fetch(`${node.url}/graphql/playground`, { headers: { origin: "https://elsewhere.example" } })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    expect(res.headers.get("access-control-allow-origin")).toBeNull()
    const csp = res.headers.get("content-security-policy") ?? ""
    const host = new URL(node.url).host
    expect(csp).toContain("script-src 'self';")
    expect(csp).toContain("style-src 'self' 'unsafe-inline';")
    expect(csp).toContain(`connect-src 'self' ws://${host} wss://${host};`)
    const html = await res.text()
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/) // no inline script
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//) // nothing from another origin
    const assets = assetsOf(html)
    expect(assets).toHaveLength(7)

    for (const path of assets) {
      const asset = await fetch(`${node.url}${path}`)
      expect(asset.status, path).toBe(200)
      expect(asset.headers.get("content-type"), path).toMatch(path.endsWith(".css") ? /^text\/css/ : /^text\/javascript/)
      expect(asset.headers.get("cache-control"), path).toContain("max-age=31536000")
      expect(asset.headers.get("x-content-type-options"), path).toBe("nosniff")
      const etag = asset.headers.get("etag")
      expect(etag, path).toMatch(/^"[\w-]+"$/)
      expect(path, "the content hash is in the name").toContain(etag!.slice(1, -1))
      expect((await fetch(`${node.url}${path}`, { headers: { "if-none-match": etag! } })).status, path).toBe(304)
    }
    // The installed package's own bytes.
    const graphiql = assets.find((a) => /\/graphiql\.min\.[\w-]+\.js$/.test(a))!
    const installed = join(dirname(createRequire(import.meta.url).resolve("graphiql/package.json")), "graphiql.min.js")
    expect(Buffer.from(await (await fetch(`${node.url}${graphiql}`)).arrayBuffer()).equals(readFileSync(installed))).toBe(true)
    expect((await fetch(`${node.url}/graphql/playground/assets/graphiql.min.js`)).status).toBe(404)
  })

  it("opens on an empty result panel: nothing is sent, and no error shown, before a key is typed in; the key then brings the schema", async () => {
    const page = await browser.newPage()
    const posts: Array<string> = []
    page.on("request", (request) => {
      if (request.method() === "POST") posts.push(request.postData() ?? "")
    })
    // Whatever the result panel ever shows, from the first paint on (issue 34: the page opened on
    // an UNAUTHENTICATED error of the schema request GraphiQL made by itself).
    await page.addInitScript(`(() => {
      window.__shown = []
      new MutationObserver(() => {
        const panel = document.querySelector("section.result-window")
        const text = panel ? panel.innerText.replace(/[\\s\\u200b]+/g, " ").trim() : ""
        if (text !== "" && window.__shown[window.__shown.length - 1] !== text) window.__shown.push(text)
      }).observe(document, { subtree: true, childList: true, characterData: true })
    })()`)
    try {
      await page.goto(`${node.url}/graphql/playground`)
      const headers = page.locator(".graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror")
      await expect.poll(() => headers.innerText()).toContain("Bearer sk_live_…")
      await headers.click()
      await page.keyboard.press("ControlOrMeta+A")
      await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${key}` }))
      // The key typed in: GraphiQL fetches the schema with it (docs and completion work).
      await expect.poll(() => posts.some((body) => body.includes("IntrospectionQuery")), { timeout: 15_000 }).toBe(true)
      await page.locator(`.graphiql-sidebar button[aria-label="Show Documentation Explorer"]`).click()
      await expect.poll(() => page.locator(".graphiql-doc-explorer").innerText(), { timeout: 15_000 }).toContain("Query")
      expect(await page.evaluate<Array<string>>("window.__shown")).toEqual([])
      expect((await page.locator("section.result-window").innerText()).replace(/[\s\u200b]+/g, "")).toBe("")
    } finally {
      await page.close()
    }
  })

  it("runs a query, then a subscription over the WebSocket, in Chromium with the key from the headers panel", async () => {
    const page = await browser.newPage()
    const origin = new URL(node.url).origin
    const requests: Array<string> = []
    const problems: Array<string> = []
    page.on("request", (request) => requests.push(request.url()))
    page.on("websocket", (socket) => requests.push(socket.url()))
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`)
    })
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`))
    try {
      await page.goto(`${node.url}/graphql/playground`)
      // The headers panel is open, holding the placeholder.
      await page.locator(`.graphiql-editor-tools button[data-name="headers"].active`).waitFor()
      const headers = page.locator(".graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror")
      await expect.poll(() => headers.innerText()).toContain("Bearer sk_live_…")

      await headers.click()
      await page.keyboard.press("ControlOrMeta+A")
      await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${key}` }))
      const query = page.locator(".graphiql-query-editor .CodeMirror")
      await query.click()
      await page.keyboard.press("ControlOrMeta+A")
      await page.keyboard.insertText("{ me { label plan } }")
      await page.locator(".graphiql-execute-button").click()

      const result = page.locator("section.result-window")
      await expect.poll(() => result.innerText(), { timeout: 15_000 }).toContain(label)
      expect(await result.innerText()).toContain("ENTERPRISE")
      expect(requests.some((url) => url === `${origin}/api/v1/graphql`)).toBe(true)

      // A subscription from the page: over the WebSocket, with the headers panel's key.
      await query.click()
      await page.keyboard.press("ControlOrMeta+A")
      await page.keyboard.insertText("subscription { paymentReceived { reference_id amount } }")
      await page.locator(".graphiql-execute-button").click()
      const reference = `order-${randomBytes(4).toString("hex")}`
      // The socket's subscription is in place once the node counts its listener.
      await expect.poll(async () => /herald_live_listeners\S* 1\b/.test(await (await fetch(`${node.metricsUrl}/metrics`)).text()), { timeout: 15_000 }).toBe(true)
      const paid = await fetch(`${simUrl}/simulate/wa/payment`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ phone_number_id: numberId, from: "919811100009", reference_id: reference, amount: 250, currency: "INR" })
      })
      expect(paid.status).toBe(202)
      await expect.poll(() => result.innerText(), { timeout: 15_000 }).toContain(reference)
      expect(requests).toContain(`${origin.replace(/^http/, "ws")}/api/v1/graphql`)
      // The run is in GraphiQL's history, the key is not in the browser's storage.
      const stored = () => page.evaluate<string>("JSON.stringify(localStorage)") // an expression: no DOM types here
      await expect.poll(stored).toContain("me { label plan }")
      expect(await stored()).not.toContain(key)
      const socketOrigin = origin.replace(/^http/, "ws")
      expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith(`${socketOrigin}/`) && !url.startsWith("data:"))).toEqual([])
      expect(problems).toEqual([])
    } finally {
      await page.close()
    }
  })
})
