// What a one-shot operator command costs (issue 34, item 12): CPU (user + system) and wall time of
// `herald admin wallet-credit` on a migrated database, from spawn to exit, next to the floor
// measured in the same run (`node -e 1`: Node's own start-up), a peer (`node` importing `pg`, the
// driver alone) and the same command run from the server's bundle (dist/herald.mjs, which every
// command loaded before the operator's own bundle). Medians of RUNS runs each, interleaved so that the
// machine's load falls on all alike. Prints one JSON line.
import { spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { cleanup, envFor, makeIsolation } from "../test/support/isolation.ts"

const RUNS = Number(process.env.RUNS ?? 9)
const root = fileURLToPath(new URL("..", import.meta.url))
const herald = fileURLToPath(new URL("../bin/herald.js", import.meta.url))
const serverBundle = fileURLToPath(new URL("../dist/herald.mjs", import.meta.url))

// Loaded before anything else in each child: at exit it writes the process's CPU time (getrusage,
// start-up included) to file descriptor 3, which the parent reads.
const CPU_AT_EXIT = "data:text/javascript," + encodeURIComponent(
  `import { writeSync } from "node:fs"; process.on("exit", () => { const u = process.cpuUsage(); writeSync(3, JSON.stringify({ cpu_us: u.user + u.system })) })`
)

interface Sample {
  readonly cpuMs: number
  readonly wallMs: number
}

const run = async (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Sample> => {
  const t0 = performance.now()
  const child = spawn(process.execPath, ["--import", CPU_AT_EXIT, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe", "pipe"]
  })
  let out = ""
  let cpu = ""
  child.stdout!.setEncoding("utf8").on("data", (d) => (out += d))
  child.stderr!.setEncoding("utf8").on("data", (d) => (out += d))
  ;(child.stdio[3] as NodeJS.ReadableStream).setEncoding("utf8").on("data", (d: string) => (cpu += d))
  const [code] = (await once(child, "close")) as [number | null]
  const wallMs = performance.now() - t0
  if (code !== 0) throw new Error(`node ${args.join(" ")} exited with ${code}:\n${out}`)
  return { cpuMs: (JSON.parse(cpu) as { cpu_us: number }).cpu_us / 1000, wallMs }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return Math.round(sorted[Math.floor(sorted.length / 2)]!)
}

const iso = makeIsolation()
try {
  const env = envFor(iso, { LOG_LEVEL: "warning" })
  // Untimed: the bundles built when a source is newer, the database created and migrated, an account.
  await run([herald, "migrate"], env)
  await run([herald, "admin", "create-account", "--email", "bench@startup.io", "--password", "bench password", "--label", "Bench"], env)

  const commands = {
    node: ["-e", "1"],
    pg: ["--input-type=module", "-e", "await import('pg')"],
    admin: [herald, "admin", "wallet-credit", "bench@startup.io", "1"],
    server: [serverBundle, "admin", "wallet-credit", "bench@startup.io", "1"]
  } as const
  const samples: Record<keyof typeof commands, Array<Sample>> = { node: [], pg: [], admin: [], server: [] }
  for (let i = 0; i < RUNS; i++) {
    for (const name of Object.keys(commands) as Array<keyof typeof commands>) samples[name].push(await run(commands[name], env))
  }
  const figure = (name: keyof typeof commands) => ({
    cpu_ms: median(samples[name].map((s) => s.cpuMs)),
    wall_ms: median(samples[name].map((s) => s.wallMs))
  })
  const admin = figure("admin")
  const server = figure("server")
  const node = figure("node")
  console.log(JSON.stringify({
    bench: "startup-admin",
    runs: RUNS,
    command: "herald admin wallet-credit ACCOUNT 1 (bin/herald.js, its own bundle dist/herald-admin.mjs, database at this version)",
    admin_cpu_ms: admin.cpu_ms,
    admin_wall_ms: admin.wall_ms,
    baseline_node_e_1_cpu_ms: node.cpu_ms,
    baseline_node_e_1_wall_ms: node.wall_ms,
    peer_node_import_pg_cpu_ms: figure("pg").cpu_ms,
    peer_node_import_pg_wall_ms: figure("pg").wall_ms,
    server_bundle_cpu_ms: server.cpu_ms,
    server_bundle_wall_ms: server.wall_ms,
    admin_cpu_over_node: Number((admin.cpu_ms / node.cpu_ms).toFixed(1)),
    server_bundle_cpu_over_admin: Number((server.cpu_ms / admin.cpu_ms).toFixed(1))
  }))
} finally {
  await cleanup(iso)
}
