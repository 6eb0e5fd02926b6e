import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, openSync, readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../test/support/TcpProxy.ts"

/** The machine's nats-server (2.9.10 here); NATS_SERVER points elsewhere. */
export const NATS_SERVER = process.env.NATS_SERVER ?? "/usr/sbin/nats-server"

export interface BenchNats {
  /** Client URLs, comma-separated: what NATS_URL takes. */
  readonly urls: string
  readonly pids: () => Array<number>
  readonly logTails: (lines?: number) => string
  /** Kills every server and removes their store and log directory. */
  readonly stop: () => Promise<void>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * `size` nats-servers with JetStream on free loopback ports, each with its own store directory
 * under one temporary directory: one server alone, or (size > 1) one cluster whose servers route
 * to each other. Resolves once every server answers /healthz (JetStream up, and on a cluster in
 * contact with a meta leader).
 */
export const startNats = async (size: number, name: string): Promise<BenchNats> => {
  const root = await mkdtemp(join(tmpdir(), `herald-bench-nats-${name}-`))
  const members: Array<{ name: string; port: number; routePort: number; monitorPort: number; dir: string; log: string }> = []
  for (let i = 1; i <= size; i++) {
    members.push({ name: `${name}-n${i}`, port: await freePort(), routePort: await freePort(), monitorPort: await freePort(), dir: join(root, `n${i}`), log: join(root, `n${i}.log`) })
  }
  const routes = members.map((m) => `nats://127.0.0.1:${m.routePort}`).join(",")
  const children: Array<ChildProcess> = []
  const logTails = (lines = 20) =>
    members.map((m) => {
      try {
        return `--- ${m.name}\n${readFileSync(m.log, "utf8").split("\n").slice(-lines).join("\n")}`
      } catch {
        return `--- ${m.name}: no log`
      }
    }).join("\n")
  const stop = async () => {
    await Promise.all(children.map((child) =>
      child.exitCode !== null || child.signalCode !== null
        ? undefined
        : new Promise<void>((resolve) => {
          child.once("exit", () => resolve())
          child.kill("SIGKILL")
        })
    ))
    await rm(root, { recursive: true, force: true })
  }
  try {
    for (const m of members) {
      const log = openSync(m.log, "a")
      const cluster = size > 1
        ? ["--cluster_name", `${name}-cluster`, "--cluster", `nats://127.0.0.1:${m.routePort}`, "--routes", routes]
        : []
      children.push(spawn(NATS_SERVER, ["-a", "127.0.0.1", "-p", String(m.port), "-m", String(m.monitorPort), "--server_name", m.name, ...cluster, "-js", "-sd", m.dir], {
        stdio: ["ignore", log, log]
      }))
      closeSync(log)
    }
    const deadline = Date.now() + 60_000
    for (const [i, m] of members.entries()) {
      while (!(await fetch(`http://127.0.0.1:${m.monitorPort}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false))) {
        const child = children[i]!
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`nats-server ${m.name} exited:\n${logTails()}`)
        if (Date.now() > deadline) throw new Error(`nats-server ${m.name} not healthy in time:\n${logTails()}`)
        await sleep(100)
      }
    }
  } catch (error) {
    await stop()
    throw error
  }
  return {
    urls: members.map((m) => `nats://127.0.0.1:${m.port}`).join(","),
    pids: () => children.map((c) => c.pid!).filter((pid) => pid !== undefined),
    logTails,
    stop
  }
}
