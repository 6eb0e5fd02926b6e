import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { freePort } from "./TcpProxy.ts"

const BIN = fileURLToPath(new URL("../../bin/herald.js", import.meta.url))

export interface HeraldProcess {
  readonly url: string
  readonly port: number
  /**
   * Where GET /metrics answers: the node's metrics port (METRICS_PORT, a free one unless the env
   * names one other than 0), or its API port when the env sets METRICS_PORT to "" (then only with
   * METRICS_TOKEN).
   */
  readonly metricsUrl: string
  readonly child: ChildProcess
  /** Everything the process printed so far (stdout and stderr). */
  readonly output: () => string
  readonly logs: () => Array<Record<string, unknown>>
  /** SIGTERM and wait for the exit; resolves with the code and how long it took. */
  readonly stop: () => Promise<{ code: number | null; ms: number }>
  /** kill -9. */
  readonly kill: () => Promise<void>
  readonly exited: Promise<number | null>
}

/** What a node process runs: `herald` itself by default, or another entry (node args + script). */
export interface Entry {
  readonly argv: ReadonlyArray<string>
}
export const heraldEntry: Entry = { argv: [BIN] }

/** Runs `herald <args>` (or another entry) as a child process and collects its output. */
export const runHerald = (args: ReadonlyArray<string>, env: Record<string, string>, entry: Entry = heraldEntry) => {
  const child = spawn(process.execPath, [...entry.argv, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d) => (stdout += d))
  child.stderr.on("data", (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

/**
 * Polls `url` until it answers 2xx (or a status `accept` takes). Fails, with what the process
 * printed, if `child` ends first, or kills it and fails once `timeoutMs` has passed.
 */
export const untilAnswers = async (
  child: ChildProcess,
  url: string,
  what: string,
  options: { readonly output?: () => string; readonly timeoutMs?: number; readonly intervalMs?: number; readonly accept?: (status: number) => boolean } = {}
) => {
  const accept = options.accept ?? ((status: number) => status >= 200 && status < 300)
  // A process on a 2-core machine running three test files, each with nodes of its own, can take
  // half a minute before it prints anything.
  const deadline = Date.now() + (options.timeoutMs ?? 60_000)
  const output = options.output ?? (() => "")
  while (!(await fetch(url).then((r) => accept(r.status), () => false))) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what} exited with ${child.exitCode ?? child.signalCode} before it was up:\n${output()}`)
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`${what} did not answer ${url} in time:\n${output()}`)
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 50))
  }
}

/**
 * `herald gateway-sim` as a process of its own on `port`, calling Herald back at `callbackUrl`;
 * resolves once it answers (within 30 s, or fails with what it printed).
 */
export const startGatewaySim = async (port: number, callbackUrl: string, env: Record<string, string>) => {
  const run = runHerald(["gateway-sim", "--port", String(port), "--host", "127.0.0.1", "--callback-url", callbackUrl], env)
  const url = `http://127.0.0.1:${port}`
  await untilAnswers(run.child, `${url}/simulate/log`, "gateway-sim", { output: () => run.stdout() + run.stderr() })
  const kill = async () => {
    if (run.child.exitCode !== null) return
    run.child.kill("SIGKILL")
    await run.exited
  }
  return { ...run, url, kill }
}

/** `herald <args>` to completion: exit code, stdout and stderr. */
export const heraldCommand = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const run = runHerald(args, env)
  const code = await run.exited
  return { code, stdout: run.stdout(), stderr: run.stderr() }
}

/**
 * Starts `herald serve` on a free port and waits until it answers /health/live (or, with
 * `waitReady`, /health/ready with 200).
 */
export const startHerald = async (
  env: Record<string, string>,
  options: { readonly waitReady?: boolean; readonly timeoutMs?: number; readonly entry?: Entry } = {}
): Promise<HeraldProcess> => {
  // A free port is found by binding and closing it, so another process of the suite may take it
  // before the node binds it: the node then stops with EADDRINUSE, and gets other ports.
  for (let tries = 1; ; tries++) {
    try {
      return await startHeraldOnce(env, options)
    } catch (error) {
      const chosenHere = !env.PORT || env.METRICS_PORT === undefined
      if (!(chosenHere && tries < 3 && String(error).includes("EADDRINUSE"))) throw error
    }
  }
}

const startHeraldOnce = async (
  env: Record<string, string>,
  options: { readonly waitReady?: boolean; readonly timeoutMs?: number; readonly entry?: Entry }
): Promise<HeraldProcess> => {
  const port = env.PORT ? Number(env.PORT) : await freePort()
  const metricsPort = env.METRICS_PORT === undefined ? await freePort() : env.METRICS_PORT === "" ? undefined : Number(env.METRICS_PORT)
  const run = runHerald(options.entry ? [] : ["serve"], { ...env, PORT: String(port), METRICS_PORT: metricsPort === undefined ? "" : String(metricsPort) }, options.entry)
  const url = `http://127.0.0.1:${port}`
  const output = () => run.stdout() + run.stderr()
  const path = options.waitReady === false ? "/health/live" : "/health/ready"
  await untilAnswers(run.child, url + path, "herald", { output, intervalMs: 100, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) })
  const metricsUrl = metricsPort === undefined ? url : `http://127.0.0.1:${metricsPort}`
  // Its own listener, started beside the API's: up too before the node is handed over (401: up, behind METRICS_TOKEN).
  if (metricsPort !== undefined) await untilAnswers(run.child, `${metricsUrl}/metrics`, "herald's metrics port", { output, accept: (s) => s === 200 || s === 401 })
  return {
    url,
    port,
    metricsUrl,
    child: run.child,
    output,
    logs: () =>
      run.stdout().split("\n").filter((l) => l.startsWith("{")).map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>
        } catch {
          return {}
        }
      }),
    exited: run.exited,
    stop: async () => {
      const started = Date.now()
      if (run.child.exitCode === null) run.child.kill("SIGTERM")
      const code = await run.exited
      return { code, ms: Date.now() - started }
    },
    kill: async () => {
      if (run.child.exitCode === null) run.child.kill("SIGKILL")
      await run.exited
    }
  }
}

/**
 * `herald smtp-sim` as a process of its own: SMTP on `port`, its control API on `httpPort`,
 * reporting complaints to `callbackUrl`; resolves once the control API answers (within 30 s, or
 * fails with what it printed).
 */
export const startSmtpSim = async (port: number, httpPort: number, callbackUrl: string, env: Record<string, string>) => {
  const run = runHerald(
    ["smtp-sim", "--port", String(port), "--http-port", String(httpPort), "--host", "127.0.0.1", "--callback-url", callbackUrl],
    env
  )
  const url = `http://127.0.0.1:${httpPort}`
  await untilAnswers(run.child, `${url}/simulate/smtp/stats`, "smtp-sim", { output: () => run.stdout() + run.stderr() })
  const kill = async () => {
    if (run.child.exitCode !== null) return
    run.child.kill("SIGKILL")
    await run.exited
  }
  return { ...run, url, smtpUrl: `smtp://127.0.0.1:${port}`, kill }
}
