// The HTTP baselines a bench compares Herald with in the same run: the framework's ceiling (a bare
// @effect/platform route) and the machine's (a bare node:http server), each a process of its own
// answering GET /api/v1/rcs/bots with the same JSON. This machine's speed varies from day to day
// (2-4x between sessions, docs/benchmarks.md), so only figures of one run compare.
import { type ChildProcess, spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { untilAnswers } from "../../test/support/HeraldProcess.ts"
import { freePort } from "../../test/support/TcpProxy.ts"

const serveChild = async (argv: Array<string>, url: string): Promise<ChildProcess> => {
  const child = spawn(process.execPath, argv, { stdio: "ignore" })
  await untilAnswers(child, url, `baseline server ${argv.join(" ")}`)
  return child
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
    const url = `http://127.0.0.1:${port}/api/v1/rcs/bots`
    const child = await serveChild(argv(port, file), url)
    try {
      results[name] = await load(url)
    } finally {
      child.kill("SIGKILL")
    }
  }
  return results as Record<keyof typeof SERVERS, A>
}
