// Cold start (spawn → /health/ready 200) and idle RSS of `herald serve`, next to a bare node:http
// server started the same way (the floor: Node's own start-up). Prints one JSON line.
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { cleanup, envFor, makeIsolation } from "../test/support/isolation.ts"
import { startHerald } from "../test/support/HeraldProcess.ts"
import { freePort } from "../test/support/TcpProxy.ts"

const rssMb = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!
  return Math.round(Number(line.split(/\s+/)[1]) / 1024)
}

const bareNode = async () => {
  const port = await freePort()
  const t0 = performance.now()
  const child = spawn(process.execPath, ["-e", `require("http").createServer((q,s)=>s.end("ok")).listen(${port})`], { stdio: "ignore" })
  for (;;) {
    if (await fetch(`http://127.0.0.1:${port}/`).then((r) => r.ok, () => false)) break
    await new Promise((r) => setTimeout(r, 10))
  }
  const ms = performance.now() - t0
  await new Promise((r) => setTimeout(r, 3000))
  const rss = rssMb(child.pid!)
  child.kill("SIGKILL")
  return { ms, rss }
}

const herald = async (fresh: boolean) => {
  const iso = makeIsolation()
  try {
    if (!fresh) {
      const warm = await startHerald(envFor(iso))
      await warm.stop()
    }
    const t0 = performance.now()
    const node = await startHerald(envFor(iso, { LOG_LEVEL: "warn" }))
    const ms = performance.now() - t0
    await new Promise((r) => setTimeout(r, 3000))
    const rss = rssMb(node.child.pid!)
    const stop = await node.stop()
    return { ms, rss, stopMs: stop.ms }
  } finally {
    await cleanup(iso)
  }
}

const base = await bareNode()
const cold = await herald(true)
const warm = await herald(false)
console.log(JSON.stringify({
  bench: "startup",
  herald_cold_start_ms: Math.round(cold.ms),
  herald_cold_start_note: "fresh database: created and migrated before ready",
  herald_start_existing_db_ms: Math.round(warm.ms),
  herald_idle_rss_mb: warm.rss,
  herald_sigterm_exit_ms: warm.stopMs,
  baseline_bare_node_http_start_ms: Math.round(base.ms),
  baseline_bare_node_http_idle_rss_mb: base.rss
}))
