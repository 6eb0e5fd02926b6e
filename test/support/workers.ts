import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { envFor, type Isolation } from "./isolation.ts"
import { freePort } from "./TcpProxy.ts"

const SCRIPT = fileURLToPath(new URL("./actorWorker.ts", import.meta.url))

export interface Worker {
  readonly nodeId: string
  readonly url: string
  readonly child: ChildProcess
  readonly output: () => string
  /** What the node reports owning: kind → partitions; undefined when it does not answer. */
  readonly owned: () => Promise<Record<string, Array<number>> | undefined>
  readonly kill: () => Promise<void>
  readonly stop: () => Promise<{ code: number | null; ms: number }>
  readonly exited: Promise<number | null>
}

/** Starts a worker node process (role worker) hosting the test kinds; resolves once it is ready. */
export const startWorker = async (iso: Isolation, nodeId: string, env: Record<string, string> = {}, nodeArgs: ReadonlyArray<string> = []): Promise<Worker> => {
  const port = await freePort()
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", SCRIPT], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...envFor(iso, { HERALD_ROLE: "worker", HERALD_NODE_ID: nodeId, PORT: String(port), LOG_LEVEL: "warning", ...env }) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (d) => (out += d))
  child.stderr!.on("data", (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  let done = false
  void exited.then(() => (done = true))
  for (;;) {
    if (done) throw new Error(`worker ${nodeId} exited early:\n${out}`)
    if (await fetch(`${url}/health/ready`).then((r) => r.ok, () => false)) break
    if (Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`worker ${nodeId} not ready:\n${out}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    nodeId,
    url,
    child,
    exited,
    output: () => out,
    owned: () =>
      fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2_000) }).then(
        async (r) => ((await r.json()) as { partitions_owned: Record<string, Array<number>> }).partitions_owned,
        () => undefined
      ),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      await exited
    },
    stop: async () => {
      const started = Date.now()
      if (child.exitCode === null) child.kill("SIGTERM")
      const code = await exited
      return { code, ms: Date.now() - started }
    }
  }
}

/** Owned partitions of one kind, by node, sampled from all nodes at once. */
export const ownership = async (workers: ReadonlyArray<Worker>, kind: string) => {
  const reports = await Promise.all(workers.map(async (w) => [w.nodeId, (await w.owned())?.[kind] ?? []] as const))
  const owners = new Map<number, Array<string>>()
  for (const [node, partitions] of reports) for (const p of partitions) owners.set(p, [...(owners.get(p) ?? []), node])
  return { reports: Object.fromEntries(reports), owners }
}
