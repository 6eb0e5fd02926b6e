import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { useIsolation } from "../support/e2e.ts"
import { heraldEntry, type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { cliFor, ownerSession } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// The `herald` client commands (connect, disconnect, api, contacts import) run as child processes
// against one real node and a fake server (node:http) for what a real one cannot show: the headers
// the CLI sends, a 402, a non-JSON answer and the requests a refused body never makes. Every
// invocation gets a home of its own and only PATH and HOME (no database, no NATS).

const iso = useIsolation()
let node: HeraldProcess
const keys: Record<"growth" | "starter", string> = { growth: "", starter: "" }
const scratch = mkdtempSync(join(tmpdir(), "herald-cli-"))
const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version

// ---- the fake server ----

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}
const seen: Array<Seen> = []
let fake: http.Server
let fakeUrl = ""
const FAKE_KEY = "sk_live_fakeFAKEfake0123456789"
const FAKE_KEY_NO_ME = "sk_live_nomeNOMEnome0123456789"

const json = (res: http.ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))

const fakeHandler = (req: http.IncomingMessage, res: http.ServerResponse) => {
  let body = ""
  req.setEncoding("utf8").on("data", (d) => (body += d)).on("end", () => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body })
    const path = (req.url ?? "").split("?")[0]
    if (path === "/api/v1/app/me") {
      if (req.headers.authorization === `Bearer ${FAKE_KEY_NO_ME}`) return json(res, 500, { success: false, code: "internal_error", message: "boom" })
      return json(res, 200, { success: true, account: { account_id: "a-1", label: "Fake Co", plan: "growth", rate_limit_per_minute: 300 } })
    }
    if (path === "/api/v1/rcs/webhooks") return json(res, 200, { webhooks: [] })
    if (path === "/api/v1/echo") return json(res, 200, { method: req.method, url: req.url, content_type: req.headers["content-type"] ?? null, body })
    if (path === "/api/v1/text") return res.writeHead(200, { "content-type": "text/plain" }).end("plain text\n  as it came")
    if (path === "/api/v1/pay") return json(res, 402, { success: false, code: "insufficient_balance", message: "top up the wallet" })
    if (path === "/api/v1/locked") return json(res, 403, { success: false, code: "feature_locked", message: "not on this plan" })
    return json(res, 404, { success: false, code: "not_found", message: "no route" })
  })
}

// ---- running the CLI ----

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}
/** Everything every command printed, checked for keys at the end. */
const printed: Array<string> = []

const herald = async (args: ReadonlyArray<string>, options: { home: string; env?: Record<string, string>; stdin?: string | Buffer }): Promise<Run> => {
  const child = spawn(process.execPath, [...heraldEntry.argv, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: options.home, ...options.env },
    stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (d) => (stdout += d))
  child.stderr!.setEncoding("utf8").on("data", (d) => (stderr += d))
  // The CLI may stop reading (a body over 10 MB): that is not the test's error.
  child.stdin?.on("error", () => undefined)
  child.stdin?.end(options.stdin)
  const [code] = (await once(child, "close")) as [number | null]
  printed.push(stdout, stderr)
  return { code, stdout, stderr }
}

let homes = 0
/** A fresh, empty home directory. */
const newHome = () => {
  const home = join(scratch, `home-${++homes}`)
  mkdirSync(home, { recursive: true })
  return home
}
const defaultConfig = (home: string) => join(home, ".config", "herald", "config.json")
const mode = (path: string) => statSync(path).mode & 0o777

/** A home whose config connects to `url` with `key` (written as `herald connect` writes it). */
const connectedHome = (url: string, key: string) => {
  const home = newHome()
  mkdirSync(join(home, ".config", "herald"), { recursive: true, mode: 0o700 })
  writeFileSync(defaultConfig(home), JSON.stringify({ url, key }), { mode: 0o600 })
  return home
}

let realHome = ""
let starterHome = ""
let fakeHome = ""
let noMeHome = ""
let closedUrl = ""

beforeAll(async () => {
  fake = http.createServer(fakeHandler)
  fake.listen(0, "127.0.0.1")
  await once(fake, "listening")
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`
  closedUrl = `http://127.0.0.1:${await freePort()}`
  const env = envFor(iso, { LOG_LEVEL: "warning" })
  const cli = cliFor(env)
  node = await startHerald(env)
  await Promise.all([
    cli("admin", "create-account", "--email", "growth@cli.io", "--password", "growth password", "--label", "Growth Co", "--plan", "growth"),
    cli("admin", "create-account", "--email", "starter@cli.io", "--password", "starter password", "--label", "Starter Co", "--plan", "starter")
  ])
  const [growth, starter] = await Promise.all([
    ownerSession(node.url, "growth@cli.io", "growth password"),
    ownerSession(node.url, "starter@cli.io", "starter password")
  ])
  keys.growth = growth.key
  keys.starter = starter.key
  expect(keys.growth).toMatch(/^sk_live_/)
  expect(keys.starter).toMatch(/^sk_live_/)
  realHome = connectedHome(node.url, keys.growth)
  starterHome = connectedHome(node.url, keys.starter)
  fakeHome = connectedHome(fakeUrl, FAKE_KEY)
  noMeHome = connectedHome(fakeUrl, FAKE_KEY_NO_ME)
}, 300_000)

afterAll(async () => {
  await node?.kill()
  fake?.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe("herald connect and disconnect", () => {
  it("--key: checks the key, stores {url, key} with mode 0600 under ~/.config/herald, prints the label and plan", async () => {
    const home = newHome()
    const r = await herald(["connect", "--url", node.url, "--key", keys.growth], { home })
    expect(r.code, r.stderr).toBe(0)
    const answer = JSON.parse(r.stdout)
    expect(answer).toMatchObject({ connected: true, url: node.url, account: { label: "Growth Co", plan: "growth" }, config: defaultConfig(home) })
    expect(JSON.parse(readFileSync(defaultConfig(home), "utf8"))).toEqual({ url: node.url, key: keys.growth })
    expect(mode(defaultConfig(home))).toBe(0o600)
    expect(mode(join(home, ".config", "herald"))).toBe(0o700)
  })

  it("reads the key from a pipe; $XDG_CONFIG_HOME and $HERALD_CONFIG place the file; disconnect removes it", async () => {
    const [xdgHome, explicitHome] = [newHome(), newHome()]
    const xdg = join(xdgHome, "xdg")
    const explicit = join(explicitHome, "elsewhere", "herald.json")
    const [viaXdg, viaExplicit] = await Promise.all([
      herald(["connect", "--url", node.url], { home: xdgHome, env: { XDG_CONFIG_HOME: xdg }, stdin: `${keys.growth}\nignored second line\n` }),
      // $HERALD_CONFIG wins over $XDG_CONFIG_HOME.
      herald(["connect", "--url", `${node.url}/`], { home: explicitHome, env: { HERALD_CONFIG: explicit, XDG_CONFIG_HOME: xdg + "-unused" }, stdin: keys.growth })
    ])
    expect([viaXdg.code, viaExplicit.code], viaXdg.stderr + viaExplicit.stderr).toEqual([0, 0])
    expect(JSON.parse(viaXdg.stdout).account).toMatchObject({ label: "Growth Co", plan: "growth" })
    const xdgFile = join(xdg, "herald", "config.json")
    expect(JSON.parse(readFileSync(xdgFile, "utf8"))).toEqual({ url: node.url, key: keys.growth })
    expect(JSON.parse(readFileSync(explicit, "utf8"))).toEqual({ url: node.url, key: keys.growth })
    expect([mode(xdgFile), mode(explicit)]).toEqual([0o600, 0o600])
    expect(() => statSync(defaultConfig(xdgHome))).toThrow()
    expect(() => statSync(xdg + "-unused")).toThrow()

    // The stored connection works, then disconnect removes it and the client is not connected.
    const me = await herald(["api", "GET", "app/me"], { home: explicitHome, env: { HERALD_CONFIG: explicit } })
    expect(me.code).toBe(0)
    expect(JSON.parse(me.stdout).account.label).toBe("Growth Co")
    const gone = await herald(["disconnect"], { home: explicitHome, env: { HERALD_CONFIG: explicit } })
    expect(gone.code).toBe(0)
    expect(() => statSync(explicit)).toThrow()
    const after = await herald(["api", "GET", "app/me"], { home: explicitHome, env: { HERALD_CONFIG: explicit } })
    expect(after.code).toBe(4)
    expect(after.stderr).toContain("run herald connect first")
  })

  it("a refused key stores nothing and exits 1; an unreachable server exits 3; a bad --url exits 2", async () => {
    const [refusedHome, pipedHome, closedHome, badUrlHome] = [newHome(), newHome(), newHome(), newHome()]
    const wrongKey = "sk_live_wrongWRONGwrong0123456789abcdef"
    const [refused, piped, closed, badUrl, nothing] = await Promise.all([
      herald(["connect", "--url", node.url, "--key", wrongKey], { home: refusedHome }),
      herald(["connect", "--url", node.url], { home: pipedHome, stdin: wrongKey + "\n" }),
      herald(["connect", "--url", closedUrl, "--key", keys.growth], { home: closedHome }),
      herald(["connect", "--url", "ftp://example.com", "--key", keys.growth], { home: badUrlHome }),
      // Nothing on the pipe: no key.
      herald(["connect", "--url", node.url], { home: badUrlHome, stdin: "" })
    ])
    for (const r of [refused, piped]) {
      expect(r.code).toBe(1)
      expect(JSON.parse(r.stderr)).toMatchObject({ success: false, code: "invalid_api_key" })
      expect(r.stderr + r.stdout).not.toContain(wrongKey)
    }
    expect(closed.code).toBe(3)
    expect(JSON.parse(closed.stderr)).toMatchObject({ success: false, code: "server_unreachable" })
    expect([badUrl.code, nothing.code]).toEqual([2, 2])
    for (const home of [refusedHome, pipedHome, closedHome, badUrlHome]) expect(() => statSync(defaultConfig(home))).toThrow()
  })
})

describe("herald api", () => {
  it("METHOD in any case; the path with or without /api/v1 and with a query string; User-Agent and Bearer key", async () => {
    seen.length = 0
    const runs = await Promise.all([
      herald(["api", "get", "app/me"], { home: fakeHome }),
      herald(["api", "Get", "/app/me"], { home: fakeHome }),
      herald(["api", "GET", "/api/v1/app/me?x=1"], { home: fakeHome })
    ])
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0])
    expect(seen.map((s) => `${s.method} ${s.url}`).sort()).toEqual(["GET /api/v1/app/me", "GET /api/v1/app/me", "GET /api/v1/app/me?x=1"])
    for (const s of seen) {
      expect(s.headers["user-agent"]).toBe(`herald-cli/${VERSION}`)
      expect(s.headers.authorization).toBe(`Bearer ${FAKE_KEY}`)
    }
  })

  it("usage errors exit 2 before any request: a bad METHOD, a missing --data, --data that is not JSON (with its position)", async () => {
    seen.length = 0
    const runs = await Promise.all([
      herald(["api", "FETCH", "app/me"], { home: fakeHome }),
      herald(["api", "POST", "echo"], { home: fakeHome }),
      herald(["api", "patch", "echo"], { home: fakeHome }),
      herald(["api", "POST", "echo", "--data", '{"name": "x",}'], { home: fakeHome }),
      herald(["api", "POST", "echo", "--data", "-"], { home: fakeHome, stdin: '{"a": tru}' }),
      herald(["api", "GET"], { home: fakeHome })
    ])
    expect(runs.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2])
    expect(runs[0]!.stderr).toContain("GET, POST, PUT, PATCH or DELETE")
    for (const r of runs.slice(1, 3)) expect(r.stderr).toContain("needs --data")
    expect(JSON.parse(runs[3]!.stderr).message).toMatch(/^--data is not JSON: .* at position 13$/)
    expect(JSON.parse(runs[4]!.stderr).message).toMatch(/^--data is not JSON: .* at position 6$/)
    expect(seen).toEqual([])
  })

  it("--data as text, @file and - (standard input) is sent as the JSON body", async () => {
    seen.length = 0
    const file = join(scratch, "body.json")
    writeFileSync(file, '{"from": "file", "n": [1, 2]}')
    const runs = await Promise.all([
      herald(["api", "POST", "echo", "--data", '{"from":"text"}'], { home: fakeHome }),
      herald(["api", "PUT", "/echo", "--data", `@${file}`], { home: fakeHome }),
      herald(["api", "patch", "api/v1/echo", "--data", "-"], { home: fakeHome, stdin: '{"from":"stdin"}\n' }),
      herald(["api", "DELETE", "echo?id=7"], { home: fakeHome })
    ])
    expect(runs.map((r) => r.code), runs.map((r) => r.stderr).join("")).toEqual([0, 0, 0, 0])
    expect(runs.map((r) => JSON.parse(r.stdout))).toEqual([
      { method: "POST", url: "/api/v1/echo", content_type: "application/json", body: '{"from":"text"}' },
      { method: "PUT", url: "/api/v1/echo", content_type: "application/json", body: '{"from": "file", "n": [1, 2]}' },
      { method: "PATCH", url: "/api/v1/echo", content_type: "application/json", body: '{"from":"stdin"}\n' },
      { method: "DELETE", url: "/api/v1/echo?id=7", content_type: null, body: "" }
    ])
    // A real write through the CLI.
    const created = await herald(["api", "POST", "app/contacts", "--data", '{"phone": "+919800000900", "name": "Made By CLI"}'], { home: realHome })
    expect(created.code, created.stdout + created.stderr).toBe(0)
    expect(JSON.parse(created.stdout)).toMatchObject({ success: true, contact: { phone: "+919800000900", name: "Made By CLI" } })
  })

  it("a body over 10 MB is refused before sending, naming the upload commands", async () => {
    seen.length = 0
    const big = `{"pad": "${"x".repeat(12 * 1024 * 1024)}"}`
    const file = join(scratch, "big.json")
    writeFileSync(file, big)
    const runs = await Promise.all([
      herald(["api", "POST", "echo", "--data", `@${file}`], { home: fakeHome }),
      herald(["api", "POST", "echo", "--data", "-"], { home: fakeHome, stdin: big })
    ])
    for (const r of runs) {
      expect(r.code).toBe(2)
      expect(JSON.parse(r.stderr).message).toMatch(/over 10 MB.*herald contacts import/)
    }
    expect(seen).toEqual([])
  })

  it("pretty JSON with 2 spaces and no colour on a pipe (whatever CI or FORCE_COLOR say); a non-JSON answer as it came", async () => {
    const [pretty, forced, text] = await Promise.all([
      herald(["api", "GET", "app/me"], { home: realHome }),
      herald(["api", "GET", "app/me"], { home: realHome, env: { FORCE_COLOR: "1", CI: "true" } }),
      herald(["api", "GET", "text"], { home: fakeHome })
    ])
    expect([pretty.code, forced.code, text.code]).toEqual([0, 0, 0])
    expect(pretty.stdout).toBe(JSON.stringify(JSON.parse(pretty.stdout), null, 2) + "\n")
    expect(pretty.stdout).toContain('\n  "account": {\n    "account_id"')
    expect(forced.stdout).toBe(pretty.stdout)
    expect(pretty.stdout + forced.stdout).not.toContain("\u001b")
    expect(text.stdout).toBe("plain text\n  as it came")
  })

  it("an error answer exits 1 with the answer on stdout; 402 and 403 add an upgrade prompt naming the plan", async () => {
    const [missing, pay, lockedFake, lockedReal, noMe] = await Promise.all([
      herald(["api", "GET", "app/nothing-here"], { home: realHome }),
      herald(["api", "POST", "pay", "--data", "{}"], { home: fakeHome }),
      herald(["api", "GET", "locked"], { home: fakeHome }),
      herald(["api", "GET", "app/contacts"], { home: starterHome }),
      herald(["api", "GET", "locked"], { home: noMeHome })
    ])
    expect([missing.code, pay.code, lockedFake.code, lockedReal.code, noMe.code]).toEqual([1, 1, 1, 1, 1])
    expect(JSON.parse(missing.stdout)).toMatchObject({ success: false, code: "not_found" })
    expect(missing.stderr).toBe("")
    expect(JSON.parse(pay.stdout)).toMatchObject({ success: false, code: "insufficient_balance" })
    expect(JSON.parse(lockedReal.stdout)).toMatchObject({ success: false, code: "feature_locked" })
    for (const r of [pay, lockedFake]) {
      expect(r.stderr).toContain('your account "Fake Co" is on the growth plan')
      expect(r.stderr).toContain("herald api GET /app/billing")
    }
    expect(lockedReal.stderr).toContain('your account "Starter Co" is on the starter plan')
    expect(noMe.stderr).toContain("plan is unknown")
    for (const r of [pay, lockedFake, lockedReal, noMe]) expect(r.stderr.trim().split("\n").length).toBeLessThanOrEqual(2)
  })

  it("not connected exits 4; an unreachable server exits 3", async () => {
    const [notConnected, unreachable, importNotConnected] = await Promise.all([
      herald(["api", "GET", "app/me"], { home: newHome() }),
      herald(["api", "GET", "app/me"], { home: connectedHome(closedUrl, keys.growth) }),
      herald(["contacts", "import", join(scratch, "body.json"), "--format", "ndjson"], { home: newHome() })
    ])
    expect([notConnected.code, unreachable.code, importNotConnected.code]).toEqual([4, 3, 4])
    expect(JSON.parse(notConnected.stderr)).toMatchObject({ code: "not_connected", message: expect.stringContaining("run herald connect first") })
    expect(JSON.parse(unreachable.stderr)).toMatchObject({ code: "server_unreachable" })
  })
})

describe("--url's default", () => {
  it("is http://127.0.0.1:$PORT when PORT is set, like the server's port; HERALD_API_URL comes first for webhooks attempts", async () => {
    const port = new URL(fakeUrl).port
    seen.length = 0
    const [viaPort, attempts, apiUrlFirst, notAPort, zero] = await Promise.all([
      herald(["connect", "--key", FAKE_KEY], { home: newHome(), env: { PORT: port } }),
      herald(["webhooks", "attempts", "--token", "user-token-1"], { home: newHome(), env: { PORT: port } }),
      herald(["webhooks", "attempts"], { home: newHome(), env: { HERALD_API_URL: fakeUrl, PORT: new URL(closedUrl).port, HERALD_TOKEN: "user-token-2" } }),
      herald(["connect", "--key", FAKE_KEY], { home: newHome(), env: { PORT: "http" } }),
      herald(["connect", "--key", FAKE_KEY], { home: newHome(), env: { PORT: "0" } })
    ])
    expect(viaPort.code, viaPort.stderr).toBe(0)
    expect(JSON.parse(viaPort.stdout)).toMatchObject({ connected: true, url: fakeUrl })
    for (const r of [attempts, apiUrlFirst]) {
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toEqual({ partial: false, failed: [], attempts: [] })
    }
    expect(seen.filter((s) => s.url === "/api/v1/rcs/webhooks").map((s) => s.headers.authorization).sort()).toEqual([
      "Bearer user-token-1",
      "Bearer user-token-2"
    ])
    for (const r of [notAPort, zero]) {
      expect(r.code).toBe(2)
      expect(JSON.parse(r.stderr)).toMatchObject({ success: false, code: "usage_error", message: expect.stringMatching(/^--url defaults to http:\/\/127\.0\.0\.1:\$PORT, but PORT=.* is not a port \(1 to 65535\): give --url$/) })
    }
  })
})

describe("herald contacts import", () => {
  it("streams a CSV and an NDJSON file and prints the import report", async () => {
    // +919800000900 exists already (created through `herald api POST app/contacts` above, or now).
    await herald(["api", "POST", "app/contacts", "--data", '{"phone": "+919800000900"}'], { home: realHome })
    const csv = join(scratch, "contacts.csv")
    writeFileSync(csv, [
      "phone,name,city,tier",
      "+919800000900,Existing,Pune,gold", // updated
      "+919800000901,New One,Delhi,silver", // added
      "+919800000902,New Two,,", // added
      "+919800000901,Repeat,Delhi,silver", // duplicate
      "not a phone,Bad,Goa,x", // invalid
      ""
    ].join("\n"))
    const ndjson = join(scratch, "contacts.data")
    writeFileSync(ndjson, [
      JSON.stringify({ phone: "+919800000903", name: "Json One", traits: { city: "Agra" } }),
      JSON.stringify({ phone: "+919800000900", name: "Existing Again" }), // updated
      JSON.stringify({ phone: "12" }),
      ""
    ].join("\n"))
    const [fromCsv, fromNdjson, noFormat, noFile] = await Promise.all([
      herald(["contacts", "import", csv], { home: realHome }),
      herald(["contacts", "import", ndjson, "--format", "ndjson"], { home: realHome }),
      herald(["contacts", "import", ndjson], { home: realHome }),
      herald(["contacts", "import", join(scratch, "absent.csv")], { home: realHome })
    ])
    expect(fromCsv.code, fromCsv.stdout + fromCsv.stderr).toBe(0)
    expect(fromNdjson.code, fromNdjson.stdout + fromNdjson.stderr).toBe(0)
    expect([noFormat.code, noFile.code]).toEqual([2, 2])
    expect(noFormat.stderr).toContain("--format")
    expect(fromCsv.stdout).toBe(JSON.stringify(JSON.parse(fromCsv.stdout), null, 2) + "\n")
    expect(JSON.parse(fromCsv.stdout)).toMatchObject({
      success: true,
      added: 2,
      updated: 1,
      duplicates: 1,
      invalid: [{ row: 5, phone: "not a phone", reason: expect.any(String) }],
      invalid_count: 1
    })
    // No progress bar on a pipe.
    expect(fromCsv.stderr).toBe("")
    expect(JSON.parse(fromNdjson.stdout)).toMatchObject({ success: true, added: 1, updated: 1, duplicates: 0, invalid_count: 1 })
    const listed = await herald(["api", "GET", "app/contacts?search=Json"], { home: realHome })
    expect(JSON.parse(listed.stdout).contacts).toMatchObject([{ phone: "+919800000903", name: "Json One", traits: { city: "Agra" } }])
  })
})

describe("secrets", () => {
  it("no command printed a key", () => {
    expect(printed.length).toBeGreaterThan(40)
    for (const key of [keys.growth, keys.starter, FAKE_KEY, FAKE_KEY_NO_ME]) {
      for (const text of printed) expect(text).not.toContain(key)
    }
  })
})
