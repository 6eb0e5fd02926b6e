import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, openSync, readFileSync } from "node:fs"
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connect, type NatsConnection } from "nats"
import { freePort } from "./TcpProxy.ts"

/** The machine's nats-server (2.9.10 here); TEST_NATS_SERVER points elsewhere. */
export const NATS_SERVER = process.env.TEST_NATS_SERVER ?? "/usr/sbin/nats-server"

const SIZE = 3

interface Member {
  readonly name: string
  readonly port: number
  readonly routePort: number
  readonly monitorPort: number
  readonly storeDir: string
  readonly logFile: string
  child: ChildProcess | undefined
  exited: Promise<void>
}

export interface NatsCluster {
  /** The three client URLs, comma-separated (what NATS_URL takes). */
  readonly urls: string
  /** Each server's client URL, by index. */
  readonly serverUrls: ReadonlyArray<string>
  /** Each server's client port, by index (for a proxy in front of one). */
  readonly ports: ReadonlyArray<number>
  /** SIGKILL server `i` and wait for it to exit. */
  readonly kill: (i: number) => Promise<void>
  /** Start server `i` again: the same name, ports and store dir. */
  readonly start: (i: number) => Promise<void>
  /** Kill server `i`, delete its store dir, start it again empty under the same name. */
  readonly replace: (i: number) => Promise<void>
  /**
   * Until all three servers are routed to each other, each reports itself healthy, JetStream
   * answers with a meta leader, and every stream (and its consumers) has a leader with every
   * replica current. Throws, with the servers' log tails, past `timeoutMs`.
   */
  readonly awaitReady: (options?: { readonly timeoutMs?: number }) => Promise<void>
  /** How many streams each server (by index) leads now. */
  readonly streamLeaders: () => Promise<Array<number>>
  /** Each stream's replica count and the servers (by index) holding it current: its leader and current followers. */
  readonly placement: () => Promise<Array<{ readonly stream: string; readonly replicas: number; readonly servers: Array<number> }>>
  /**
   * The streams `which` selects, as JetStream sees them: messages and sequences, leader and
   * replicas, and for each durable consumer what is pending, waiting for an ack, delivered and
   * acknowledged. For a failing test's message.
   */
  readonly describe: (which: (stream: string) => boolean) => Promise<string>
  /** The last `lines` lines of each server's log (those `skip` does not match), for a failing test's message. */
  readonly logTails: (lines?: number, skip?: RegExp) => string
  /** Kill every server and remove the store and log directory. */
  readonly stop: () => Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const getJson = async (url: string): Promise<any> => {
  const res = await fetch(url, { signal: AbortSignal.timeout(2_000) })
  return { status: res.status, body: await res.json() }
}

/**
 * A 3-server NATS JetStream cluster on free loopback ports, each server with its own store dir
 * under one mkdtemp directory (logs beside them). `--no_advertise`: servers do not tell clients of
 * the others' addresses, so a client uses only the URLs it was given (a worker reaching NATS
 * through proxies must not find its way around them).
 */
export const startNatsCluster = async (prefix: string): Promise<NatsCluster> => {
  const root = await mkdtemp(join(tmpdir(), `herald-nats-${prefix}-`))
  const members: Array<Member> = []
  for (let i = 0; i < SIZE; i++) {
    members.push({
      name: `${prefix}-n${i + 1}`,
      port: await freePort(),
      routePort: await freePort(),
      monitorPort: await freePort(),
      storeDir: join(root, `n${i + 1}`),
      logFile: join(root, `n${i + 1}.log`),
      child: undefined,
      exited: Promise.resolve()
    })
  }
  const routes = members.map((m) => `nats://127.0.0.1:${m.routePort}`).join(",")
  const serverUrls = members.map((m) => `nats://127.0.0.1:${m.port}`)

  const member = (i: number) => {
    const m = members[i]
    if (m === undefined) throw new Error(`no server ${i} in a cluster of ${SIZE}`)
    return m
  }

  const start = async (i: number) => {
    const m = member(i)
    if (m.child !== undefined && m.child.exitCode === null && m.child.signalCode === null) return
    await mkdir(m.storeDir, { recursive: true })
    // The server's own output, appended across restarts, so a failing test can print what each
    // server went through.
    const log = openSync(m.logFile, "a")
    const child = spawn(NATS_SERVER, [
      "-a", "127.0.0.1",
      "-p", String(m.port),
      "-m", String(m.monitorPort),
      "--server_name", m.name,
      "--cluster_name", `${prefix}-cluster`,
      "--cluster", `nats://127.0.0.1:${m.routePort}`,
      "--routes", routes,
      "--no_advertise",
      "-js",
      "-sd", m.storeDir
    ], { stdio: ["ignore", log, log] })
    closeSync(log)
    m.child = child
    m.exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    // Up once it takes client connections (JetStream may still be electing: awaitReady waits).
    const deadline = Date.now() + 20_000
    while (!(await getJson(`http://127.0.0.1:${m.monitorPort}/varz`).then(() => true, () => false))) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`nats-server ${m.name} exited at start:\n${tail(m, 30)}`)
      if (Date.now() > deadline) throw new Error(`nats-server ${m.name} did not listen in time:\n${tail(m, 30)}`)
      await sleep(50)
    }
  }

  const kill = async (i: number) => {
    const m = member(i)
    if (m.child === undefined || m.child.exitCode !== null || m.child.signalCode !== null) return
    m.child.kill("SIGKILL")
    await m.exited
  }

  const tail = (m: Member, lines: number, skip?: RegExp) => {
    try {
      return readFileSync(m.logFile, "utf8").trimEnd().split("\n").filter((l) => skip === undefined || !skip.test(l)).slice(-lines).join("\n")
    } catch {
      return "(no log)"
    }
  }

  const logTails = (lines = 40, skip?: RegExp) => members.map((m) => `--- ${m.name} (${m.logFile}) ---\n${tail(m, lines, skip)}`).join("\n")

  /** Why the cluster is not ready yet, or undefined when it is. */
  const notReady = async (nc: NatsConnection | undefined): Promise<string | undefined> => {
    for (const m of members) {
      const routez = await getJson(`http://127.0.0.1:${m.monitorPort}/routez`).catch((e) => ({ status: 0, body: String(e) }))
      if (routez.status !== 200) return `${m.name}: /routez ${routez.status} ${JSON.stringify(routez.body)}`
      // Each server routes to both others (with a route per pool it may list more than two).
      const peers = new Set((routez.body.routes ?? []).map((r: { remote_id: string }) => r.remote_id))
      if (peers.size < SIZE - 1) return `${m.name}: routed to ${peers.size} of ${SIZE - 1} servers`
      // JetStream enabled, a meta leader known, and every stream and consumer it holds current.
      const health = await getJson(`http://127.0.0.1:${m.monitorPort}/healthz`).catch((e) => ({ status: 0, body: String(e) }))
      if (health.status !== 200) return `${m.name}: /healthz ${health.status} ${JSON.stringify(health.body)}`
    }
    if (nc === undefined) return "no client connection yet"
    const jsm = await nc.jetstreamManager({ timeout: 3_000 })
    await jsm.getAccountInfo().catch((e) => Promise.reject(new Error(`account info: ${e}`)))
    const infos = await jsm.streams.list().next().catch((e) => Promise.reject(new Error(`stream list: ${e}`)))
    for (const info of infos) {
      const name = info.config.name
      const cluster = info.cluster
      if (cluster?.leader === undefined || cluster.leader === "") return `stream ${name}: no leader`
      const replicas = cluster.replicas ?? []
      if (replicas.length < info.config.num_replicas - 1) return `stream ${name}: ${replicas.length} of ${info.config.num_replicas - 1} followers`
      const behind = replicas.filter((r) => !r.current || r.offline === true)
      if (behind.length > 0) return `stream ${name}: replicas not current: ${behind.map((r) => r.name).join(", ")}`
      // A KV bucket's stream has only its clients' short-lived ordered consumers (a watch, a
      // keys listing): nothing to wait for, and listing them while one is stranded on a server
      // that died times out. The durable consumers of the other streams each need a leader.
      if (name.startsWith("KV_")) continue
      const consumers = await jsm.consumers.list(name).next().catch((e) => Promise.reject(new Error(`consumers of ${name}: ${e}`)))
      for (const consumer of consumers) {
        if (consumer.config.durable_name === undefined) continue
        if (consumer.cluster?.leader === undefined || consumer.cluster.leader === "") return `consumer ${name}/${consumer.name}: no leader`
      }
    }
    return undefined
  }

  const awaitReady = async (options: { readonly timeoutMs?: number } = {}) => {
    const deadline = Date.now() + (options.timeoutMs ?? 120_000)
    let nc: NatsConnection | undefined
    let last = "not checked"
    try {
      for (;;) {
        try {
          nc ??= await connect({ servers: serverUrls, timeout: 3_000, maxReconnectAttempts: -1, reconnectTimeWait: 250 })
          const why = await notReady(nc)
          if (why === undefined) return
          last = why
        } catch (error) {
          last = String(error)
        }
        if (Date.now() > deadline) throw new Error(`NATS cluster not ready: ${last}\n${logTails(40, /new consumer leader/)}`)
        await sleep(250)
      }
    } finally {
      await nc?.close().catch(() => undefined)
    }
  }

  const streamInfos = async () => {
    const nc = await connect({ servers: serverUrls, timeout: 3_000 })
    try {
      const jsm = await nc.jetstreamManager({ timeout: 3_000 })
      return await jsm.streams.list().next()
    } finally {
      await nc.close().catch(() => undefined)
    }
  }
  const indexOf = (name: string | undefined) => members.findIndex((m) => m.name === name)

  const describe = async (which: (stream: string) => boolean) => {
    const nc = await connect({ servers: serverUrls, timeout: 3_000 })
    try {
      const jsm = await nc.jetstreamManager({ timeout: 3_000 })
      const lines: Array<string> = []
      for (const info of await jsm.streams.list().next()) {
        if (!which(info.config.name)) continue
        const { messages, first_seq, last_seq } = info.state
        lines.push(`stream ${info.config.name}: ${JSON.stringify({ messages, first_seq, last_seq, leader: info.cluster?.leader, replicas: info.cluster?.replicas })}`)
        for (const c of await jsm.consumers.list(info.config.name).next()) {
          if (c.config.durable_name === undefined) continue
          lines.push(`  consumer ${c.name}: ${JSON.stringify({
            pending: c.num_pending,
            ack_pending: c.num_ack_pending,
            redelivered: c.num_redelivered,
            waiting: c.num_waiting,
            delivered: c.delivered.stream_seq,
            ack_floor: c.ack_floor.stream_seq,
            leader: c.cluster?.leader,
            replicas: c.cluster?.replicas?.map((r) => `${r.name}${r.current ? "" : " (behind)"}`)
          })}`)
        }
      }
      return lines.join("\n")
    } finally {
      await nc.close().catch(() => undefined)
    }
  }

  const streamLeaders = async () => {
    const counts = members.map(() => 0)
    for (const info of await streamInfos()) {
      const i = indexOf(info.cluster?.leader)
      if (i >= 0) counts[i]!++
    }
    return counts
  }

  const placement = async () =>
    (await streamInfos()).map((info) => ({
      stream: info.config.name,
      replicas: info.config.num_replicas,
      servers: [indexOf(info.cluster?.leader), ...(info.cluster?.replicas ?? []).filter((r) => r.current).map((r) => indexOf(r.name))]
        .filter((i) => i >= 0)
        .sort()
    }))

  const stop = async () => {
    await Promise.all(members.map((_, i) => kill(i)))
    await rm(root, { recursive: true, force: true })
  }

  try {
    await Promise.all(members.map((_, i) => start(i)))
    await awaitReady()
  } catch (error) {
    await stop()
    throw error
  }

  return {
    urls: serverUrls.join(","),
    serverUrls,
    ports: members.map((m) => m.port),
    kill,
    start,
    replace: async (i) => {
      await kill(i)
      await rm(member(i).storeDir, { recursive: true, force: true })
      await start(i)
    },
    awaitReady,
    streamLeaders,
    placement,
    describe,
    logTails,
    stop
  }
}
