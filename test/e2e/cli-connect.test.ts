import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { heraldEntry } from "../support/HeraldProcess.ts"
import { freePort } from "../support/TcpProxy.ts"

// `herald connect` first checks that a server answers at the URL, before it asks for a key: when
// none does, it says which URL it tried (and where that came from) and which --url to give, and
// asks for nothing. Child processes on pipes, against a closed port and a fake server (node:http)
// that answers GET /api/v1/app/me as Herald does; no database, no NATS.

const KEY = "sk_live_connectCONNECTconnect0123456789"
const scratch = mkdtempSync(join(tmpdir(), "herald-connect-"))
let fake: http.Server
let fakeUrl = ""
let fakePort = ""
let closedPort = ""
let closedUrl = ""
/** Requests the fake server saw: path and whether a key came with it. */
const seen: Array<{ path: string; withKey: boolean }> = []

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

let homes = 0
const newHome = () => {
  const home = join(scratch, `home-${++homes}`)
  mkdirSync(home, { recursive: true })
  return home
}
const stored = (home: string) => {
  try {
    statSync(join(home, ".config", "herald", "config.json"))
    return true
  } catch {
    return false
  }
}

const connect = async (args: ReadonlyArray<string>, options: { home: string; env?: Record<string, string>; stdin: string }): Promise<Run> => {
  const child = spawn(process.execPath, [...heraldEntry.argv, "connect", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: options.home, ...options.env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  child.stdin.on("error", () => undefined)
  child.stdin.end(options.stdin)
  const [code] = (await once(child, "close")) as [number | null]
  expect(stdout + stderr).not.toContain(KEY)
  return { code, stdout, stderr }
}

const failureOf = (run: Run) => JSON.parse(run.stderr) as { success: boolean; code: string; message: string }

beforeAll(async () => {
  fake = http.createServer((req, res) => {
    seen.push({ path: req.url ?? "", withKey: req.headers.authorization !== undefined })
    const answer = req.headers.authorization === `Bearer ${KEY}`
      ? { status: 200, body: { success: true, account: { account_id: "a-1", label: "Connect Co", plan: "growth" } } }
      : { status: 401, body: { success: false, code: "invalid_api_key", message: "Invalid or revoked API key" } }
    res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body))
  })
  fake.listen(0, "127.0.0.1")
  await once(fake, "listening")
  fakePort = String((fake.address() as AddressInfo).port)
  fakeUrl = `http://127.0.0.1:${fakePort}`
  closedPort = String(await freePort())
  closedUrl = `http://127.0.0.1:${closedPort}`
})

afterAll(() => {
  fake?.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe("herald connect, when no server answers", () => {
  it("says so before asking for the key (an empty pipe is not even read): exit 3, the URL it tried, --url to give; nothing stored", async () => {
    const [withKeyPiped, nothingPiped] = [newHome(), newHome()]
    const [piped, empty] = await Promise.all([
      connect(["--url", closedUrl], { home: withKeyPiped, stdin: KEY + "\n" }),
      // Before, an empty pipe was "no key given" (exit 2), whatever the server.
      connect(["--url", closedUrl], { home: nothingPiped, stdin: "" })
    ])
    for (const run of [piped, empty]) {
      expect(run.code, run.stderr).toBe(3)
      expect(run.stdout).toBe("")
      const failure = failureOf(run)
      expect(failure).toMatchObject({ success: false, code: "server_unreachable" })
      expect(failure.message).toContain(`no server answers at ${closedUrl} (given with --url)`)
      expect(failure.message).toContain("ECONNREFUSED")
      expect(failure.message).toContain("--url URL")
      expect(failure.message).toContain("Nothing asked, nothing stored")
    }
    expect([stored(withKeyPiped), stored(nothingPiped)]).toEqual([false, false])
  })

  it("without --url: names the default it tried and the PORT it came from", async () => {
    const run = await connect([], { home: newHome(), env: { PORT: closedPort }, stdin: KEY + "\n" })
    expect(run.code, run.stderr).toBe(3)
    expect(failureOf(run).message).toContain(`no server answers at ${closedUrl} (the default, from PORT=${closedPort})`)
  })

  it("with --url elsewhere and PORT set: suggests the --url PORT makes", async () => {
    const run = await connect(["--url", closedUrl], { home: newHome(), env: { PORT: fakePort }, stdin: KEY + "\n" })
    expect(run.code, run.stderr).toBe(3)
    expect(failureOf(run).message).toContain(`PORT is ${fakePort} here: if that is the server's, give --url ${fakeUrl}`)
  })
})

describe("herald connect, when a server answers", () => {
  it("checks that it answers without the key, then checks the key and stores the connection", async () => {
    seen.length = 0
    const home = newHome()
    const run = await connect(["--url", fakeUrl], { home, stdin: KEY + "\n" })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ connected: true, url: fakeUrl, account: { label: "Connect Co", plan: "growth" } })
    expect(stored(home)).toBe(true)
    expect(seen).toEqual([{ path: "/api/v1/app/me", withKey: false }, { path: "/api/v1/app/me", withKey: true }])
  })
})
