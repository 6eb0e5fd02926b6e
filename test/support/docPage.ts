import { afterAll, beforeAll, expect } from "@effect/vitest"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { useIsolation } from "./e2e.ts"
import { type HeraldProcess, startHerald } from "./HeraldProcess.ts"
import { envFor, type Isolation } from "./isolation.ts"
import { freePort } from "./TcpProxy.ts"

// A docs/ page run as written, for the tests that keep a tutorial honest (docs/quickstart.md,
// docs/whatsapp-quickstart.md): every ```sh block of the page, in order, in one bash, against a node
// started as its ```console block says. Only the addresses are the test's own (the node's port, the
// simulator's, a receiver's), so the page cannot drift from what Herald does.

export const ROOT = fileURLToPath(new URL("../../", import.meta.url))

/** How long a page may run: below the tests' own limit (180 s), so that a hang fails with the page's output. */
const PAGE_LIMIT_MS = 150_000

/** The page's shell blocks: ```sh fences only (```console shows what runs elsewhere). */
export const shellBlocks = (markdown: string) => [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)

export interface PageRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** stdout's lines: the answers the page shows in its comments, in order. */
  readonly lines: ReadonlyArray<string>
}

export interface DocPage {
  /** The file's database and NATS prefix (for `useDb`). */
  readonly iso: Isolation
  /** The node's environment, which the page's commands run with too (for `cliFor`). */
  readonly env: () => Record<string, string>
  readonly node: () => HeraldProcess
  /** The simulator's control API (`POST /simulate/wa/inbound`, …), in place of the page's http://localhost:8090. */
  readonly simUrl: () => string
  /**
   * Runs the page's shell blocks, as a page with the webhook receiver of examples/ does: the receiver
   * on a free port rather than 4000, and events.log, which the clean-up block removes, kept for the
   * test (`events`). The page must run to its end (exit 0).
   */
  readonly run: () => Promise<PageRun & { readonly events: string }>
}

/** The ```console block a tutorial starts with: `herald serve` with WEBHOOK_ALLOW_PRIVATE, which this test's node runs. */
const START = "npm ci && WEBHOOK_ALLOW_PRIVATE=true npm start"

/**
 * Registers a file's node for docs/`page`, which starts as START says, on this file's isolated
 * database and NATS prefix, with the in-process gateway simulator on a port of its own.
 */
export const useDocPage = (page: string): DocPage => {
  const file = join(ROOT, "docs", page)
  const iso = useIsolation()
  let env: Record<string, string> = {}
  let node: HeraldProcess | undefined
  let simUrl = ""
  let workDir = ""

  beforeAll(async () => {
    expect(readFileSync(file, "utf8")).toContain(`\`\`\`console\n${START}\n\`\`\``)
    const simPort = await freePort()
    simUrl = `http://127.0.0.1:${simPort}`
    env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort) })
    node = await startHerald({ ...env, WEBHOOK_ALLOW_PRIVATE: "true" })
    // Commands run as from the repository's folder (`npx herald` and examples/ resolve there); files
    // the page writes (events.log) land in a temporary folder.
    workDir = mkdtempSync(join(tmpdir(), "herald-docpage-"))
  })
  afterAll(async () => {
    await node?.kill()
    if (workDir) rmSync(workDir, { recursive: true, force: true })
  })

  // The page's bash leads a process group of its own: whatever it left running (a receiver started
  // with `&`, when a block failed before the clean-up) ends with it, and a page that hangs (a wait
  // loop that never ends) is stopped before the test's own limit, with what it printed so far.
  const runBash = (script: string) =>
    new Promise<PageRun>((resolve) => {
      const child = spawn("bash", ["-c", script], { cwd: workDir, env: { ...process.env, ...env }, detached: true })
      const killGroup = (signal: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, signal)
        } catch {
          // The group is gone already.
        }
      }
      const hung = setTimeout(() => killGroup("SIGKILL"), PAGE_LIMIT_MS)
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d) => (stdout += d))
      child.stderr.on("data", (d) => (stderr += d))
      child.on("exit", () => killGroup("SIGTERM"))
      child.on("close", (code) => {
        clearTimeout(hung)
        resolve({ code, stdout, stderr, lines: stdout.trim().split("\n") })
      })
    })

  return {
    iso,
    env: () => env,
    node: () => node!,
    simUrl: () => simUrl,
    run: async () => {
      const receiverPort = await freePort()
      // The page's own addresses first, so that none reaches into one put in here (a port that
      // happens to contain "4000").
      const blocks = shellBlocks(readFileSync(file, "utf8")).join("\n")
        .replaceAll("4000", String(receiverPort))
        // The clean-up block stops the receiver and removes events.log: keep a copy first.
        .replace("kill %1 2>/dev/null; rm -f events.log", "cp events.log events.kept; kill %1 2>/dev/null; rm -f events.log")
      const script = [
        "set -euo pipefail",
        // `npx herald` and `node examples/…` as from the repository's folder.
        `herald() { node ${JSON.stringify(join(ROOT, "bin", "herald.js"))} "$@"; }`,
        "npx() { \"$@\"; }",
        blocks
          .replaceAll("http://localhost:8080", node!.url)
          .replaceAll("http://localhost:8090", simUrl)
          .replaceAll("node examples/", `node ${JSON.stringify(join(ROOT, "examples"))}/`)
      ].join("\n")
      const result = await runBash(script)
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
      return { ...result, events: readFileSync(join(workDir, "events.kept"), "utf8") }
    }
  }
}
