import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { freePort } from "../support/TcpProxy.ts"

// docs/quickstart.md run as written: every ```sh block of the page, in order, in one bash, against
// a node started as its first (```console) block says. Only the addresses are this test's own
// (the node's port, the receiver's), so the page cannot drift from what Herald does.

const ROOT = fileURLToPath(new URL("../../", import.meta.url))
const PAGE = join(ROOT, "docs", "quickstart.md")

const iso = useIsolation()
const env = envFor(iso)
let node: HeraldProcess
let workDir = ""

/** The page's shell blocks: ```sh fences only (```console shows what runs elsewhere). */
const shellBlocks = (markdown: string) => [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)

const runBash = (script: string, extraEnv: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd: workDir, env: { ...process.env, ...env, ...extraEnv } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

beforeAll(async () => {
  // The page's first block: `WEBHOOK_ALLOW_PRIVATE=true npm start`, i.e. `herald serve` with it.
  expect(readFileSync(PAGE, "utf8")).toContain("```console\nnpm ci && WEBHOOK_ALLOW_PRIVATE=true npm start\n```")
  node = await startHerald({ ...env, WEBHOOK_ALLOW_PRIVATE: "true" })
  // Commands run from a scratch copy's view of the repository: `npx herald` and examples/ resolve
  // from the repository, files the page writes (events.log) land in a temporary folder.
  workDir = mkdtempSync(join(tmpdir(), "herald-quickstart-"))
})
afterAll(async () => {
  await node?.kill()
  if (workDir) rmSync(workDir, { recursive: true, force: true })
})

describe("docs/quickstart.md", () => {
  it("runs as written: a delivered message, a verified webhook, a finished broadcast, an API key's reads", async () => {
    const receiverPort = await freePort()
    const page = readFileSync(PAGE, "utf8")
    const script = [
      "set -euo pipefail",
      // `npx herald` and `node examples/…` as from the repository's folder.
      `herald() { node ${JSON.stringify(join(ROOT, "bin", "herald.js"))} "$@"; }`,
      "npx() { \"$@\"; }",
      ...shellBlocks(page)
    ].join("\n")
      .replaceAll("http://localhost:8080", node.url)
      .replaceAll("4000", String(receiverPort))
      .replaceAll("node examples/", `node ${JSON.stringify(join(ROOT, "examples"))}/`)
      // The clean-up block stops the receiver and removes events.log; read it first.
      .replace("kill %1 2>/dev/null; rm -f events.log", "cp events.log events.kept; kill %1 2>/dev/null; rm -f events.log")
    const result = await runBash(script, {})
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    const lines = result.stdout.trim().split("\n")
    // The expected answers the page shows in its comments, in order.
    expect(lines).toContain("read") // the single send, read on the simulator's phone
    expect(lines.at(-2)).toMatch(/^(sent|delivered|read)$/) // a broadcast target, read with the API key
    expect(lines.filter((l) => l === "2")).toHaveLength(2) // contacts added, broadcast sent_count
    expect(lines).toContain("missing_scope")
    const history = JSON.parse(lines.find((l) => l.startsWith("[{"))!) as Array<{ status: string }>
    expect(history.map((h) => h.status)).toEqual(["queued", "sent", "delivered", "read"])
    expect(lines.filter((l) => l === "1")).toHaveLength(2) // one message.delivered, one broadcast.completed

    const events = readFileSync(join(workDir, "events.kept"), "utf8")
    expect(events).not.toContain("REFUSED")
    expect(events).toMatch(/^verified message\.sent /m)
    expect(events).toMatch(/^verified broadcast\.completed /m)
  }, 180_000)
})
