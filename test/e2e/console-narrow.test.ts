import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { type Browser, chromium, type Page } from "playwright-core"
import { useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// The console at 360 px, the narrowest phone width in common use (issue 34, item 13): the
// overview chart's hour labels do not run into each other, and the webhook URLs of the webhooks
// and developer pages wrap where a URL may break (after a slash, a dot, ? & =), never inside a word
// of it, and never make the page scroll sideways.

const PASSWORD = "narrow console password"
const OWNER = "owner@narrow.test"
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
const NARROW = { width: 360, height: 740 }

const iso = useIsolation()
let node: HeraldProcess
let browser: Browser
let ownerToken = ""
let consumerPort = 0
const consumer = http.createServer((req, res) => {
  req.resume()
  req.on("end", () => res.end("ok"))
})
/** Long words inside, as real endpoints have: a narrow screen must break the URL between its parts. */
const hookPath = (n: number) => `/integrations/notifications/orderconfirmations/deliveryreceipts${n}?tenant=acmeretailindiawest&signature=verification`
const hookUrl = (n: number) => `http://127.0.0.1:${consumerPort}${hookPath(n)}`

beforeAll(async () => {
  const env = envFor(iso, { LOG_LEVEL: "warning" })
  const launching = chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS }).then((b) => (browser = b))
  ;[node, consumerPort] = await Promise.all([
    startHerald(env),
    new Promise<number>((resolve) => consumer.listen(0, "127.0.0.1", () => resolve((consumer.address() as AddressInfo).port)))
  ])
  await launching
  const cli = cliFor(env)
  const account = (await cli("admin", "create-account", "--email", OWNER, "--password", PASSWORD, "--label", "Narrow Retail", "--plan", "growth")).account_id as string
  const botId = (await cli("admin", "create-bot", account, "--name", "Narrow Offers", "--use-case", "promotional", "--status", "active")).bot_id as string
  ownerToken = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: OWNER, password: PASSWORD })).body.token
  for (const n of [1, 2]) {
    const made = await callJson(node.url, "POST", "/api/v1/rcs/webhooks", ownerToken, { url: hookUrl(n), events: ["message.failed"], bot_id: botId })
    expect(made.status, JSON.stringify(made.body)).toBe(200)
  }
  expect((await callJson(node.url, "PUT", "/api/v1/app/developer/webhook", ownerToken, { url: hookUrl(3) })).status).toBe(200)
}, 300_000)
afterAll(async () => {
  await browser?.close()
  await node?.kill()
  consumer.closeAllConnections()
  await new Promise((r) => consumer.close(r))
})

const signIn = async () => {
  const context = await browser.newContext({ viewport: NARROW, isMobile: true, hasTouch: true })
  const page = await context.newPage()
  await page.goto(`${node.url}/console`)
  await page.getByRole("heading", { level: 1, name: "Sign in to the Herald console" }).waitFor()
  await page.getByLabel("E-mail").fill(OWNER)
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD)
  await page.getByRole("button", { name: "Sign in", exact: true }).click()
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
  return page
}

const noSideways = (page: Page) => page.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth")

/**
 * Where the text of each element matching `selector` was broken across lines: for every line
 * after the first, the characters either side of the break.
 */
const breaksOf = (page: Page, selector: string) =>
  page.evaluate<Array<{ text: string; breaks: Array<string> }>>(`[...document.querySelectorAll(${JSON.stringify(selector)})].map((el) => {
    const text = el.textContent
    const range = document.createRange()
    const breaks = []
    let lastTop = null
    let offset = 0
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT)
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++, offset++) {
        range.setStart(node, i)
        range.setEnd(node, i + 1)
        const rect = range.getClientRects()[0]
        if (rect === undefined) continue
        if (lastTop !== null && rect.top > lastTop + 2) breaks.push(text.slice(Math.max(0, offset - 1), offset + 1))
        lastTop = rect.top
      }
    }
    return { text, breaks }
  })`)

/** The hour axis's labels (centred under their hour; the value axis's are right-aligned) and the chart's visible box. */
const hourAxis = (page: Page) =>
  page.evaluate<{ labels: Array<{ text: string; left: number; right: number }>; box: { left: number; right: number }; svgWidth: number }>(`(() => {
    const box = document.querySelector(".chart-box").getBoundingClientRect()
    const svg = document.querySelector('svg[data-testid="hour-chart"]')
    const labels = [...svg.querySelectorAll('text.axis-text[text-anchor="middle"]')].map((t) => {
      const r = t.getBoundingClientRect()
      return { text: t.textContent, left: r.left, right: r.right }
    })
    return { labels, box: { left: box.left, right: box.right }, svgWidth: svg.getBoundingClientRect().width }
  })()`)

/** A URL may break after these (UrlText puts a <wbr> after each). */
const SEPARATORS = new Set(["/", ".", "?", "&", "=", "#"])

describe("the console at 360 px", () => {
  it("the overview chart's hour labels stand apart, inside the chart, and the page does not scroll sideways", async () => {
    const page = await signIn()
    await page.getByTestId("hour-chart").waitFor()
    const axis = await hourAxis(page)
    expect(axis.labels.length, JSON.stringify(axis)).toBeGreaterThanOrEqual(3)
    expect(axis.svgWidth).toBeLessThanOrEqual(axis.box.right - axis.box.left)
    for (const [i, label] of axis.labels.entries()) {
      expect(label.left, `${label.text} starts inside the chart`).toBeGreaterThanOrEqual(axis.box.left)
      expect(label.right, `${label.text} ends inside the chart`).toBeLessThanOrEqual(axis.box.right)
      const next = axis.labels[i + 1]
      if (next !== undefined) expect(next.left - label.right, `${label.text} and ${next.text} apart`).toBeGreaterThanOrEqual(4)
    }
    expect(await noSideways(page)).toBe(true)
    await page.context().close()
  })

  it("webhook URLs wrap after a slash, dot, ?, & or =, never inside a word, on the webhooks and developer pages", async () => {
    const page = await signIn()
    const check = async (where: string) => {
      const urls = await breaksOf(page, ".url")
      expect(urls.length, where).toBeGreaterThan(0)
      for (const url of urls) {
        // At 360 px these URLs cannot fit on one line: they do wrap, and only between their parts.
        expect(url.breaks.length, `${where}: ${url.text}`).toBeGreaterThan(0)
        expect(url.breaks.filter((b) => !SEPARATORS.has(b[0]!)), `${where}: ${url.text} broke inside a word`).toEqual([])
      }
      expect(await noSideways(page), `${where} scrolls sideways`).toBe(true)
    }
    await page.goto(`${node.url}/console/webhooks`)
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor()
    for (const n of [1, 2, 3]) await page.getByTestId(/^webhook-/).filter({ hasText: `deliveryreceipts${n}` }).waitFor()
    await check("webhooks")
    await page.goto(`${node.url}/console/settings/developer`)
    await page.getByTestId("developer-webhook-url").waitFor()
    await check("developer settings")
    await page.context().close()
  })
})
