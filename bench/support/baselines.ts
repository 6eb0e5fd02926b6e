// The HTTP baselines a bench compares Herald with in the same run: the framework's ceiling (a bare
// @effect/platform route) and the machine's (a bare node:http server), each a process of its own
// answering GET /api/v1/rcs/bots with the same JSON. This machine's speed varies from day to day
// (2-4x between sessions, docs/benchmarks.md), so only figures of one run compare.
import { type ChildProcess, spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort } from "../../test/support/TcpProxy.ts"

const serveChild = async (argv: Array<string>, port: number): Promise<ChildProcess> => {
  const child = spawn(process.execPath, argv, { stdio: "ignore" })
  for (;;) {
    if (await fetch(`http://127.0.0.1:${port}/api/v1/rcs/bots`).then((r) => r.ok, () => false)) return child
    if (child.exitCode !== null) throw new Error(`baseline server ${argv.join(" ")} exited with ${child.exitCode}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const SERVERS = {
  bare_effect_route: (port: number, file: string) => ["--import", "tsx", fileURLToPath(new URL("./bare-effect.ts", import.meta.url)), String(port), file],
  bare_node_http: (port: number, file: string) => [fileURLToPath(new URL("./bare-node.mjs", import.meta.url)), String(port), file]
} as const

/**
 * Runs `load` against each baseline server answering `body`, one server at a time, and returns
 * what it measured by baseline name.
 */
export const httpBaselines = async <A>(body: unknown, load: (url: string) => Promise<A>) => {
  const file = join(tmpdir(), `herald-bench-baseline-${process.pid}-${Date.now()}.json`)
  writeFileSync(file, JSON.stringify(body))
  const results: Partial<Record<keyof typeof SERVERS, A>> = {}
  for (const [name, argv] of Object.entries(SERVERS) as Array<[keyof typeof SERVERS, typeof SERVERS[keyof typeof SERVERS]]>) {
    const port = await freePort()
    const child = await serveChild(argv(port, file), port)
    try {
      results[name] = await load(`http://127.0.0.1:${port}/api/v1/rcs/bots`)
    } finally {
      child.kill("SIGKILL")
    }
  }
  return results as Record<keyof typeof SERVERS, A>
}
