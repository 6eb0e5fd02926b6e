import { beforeAll, describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { parse } from "yaml"

// docker-compose.yml as Compose itself reads it: `docker-compose config` validates the file against
// the Compose specification and prints it resolved (anchors merged, variables substituted), which
// is what these checks read. No Docker engine is needed. It needs Debian's `docker-compose` (v1.29;
// .ci/run installs it) and fails without it.

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const FILE = `${ROOT}docker-compose.yml`

interface Service {
  readonly image?: string
  readonly build?: unknown
  readonly command?: Array<string>
  readonly environment?: Record<string, string>
  readonly ports?: Array<{ published?: number | string; target: number | string }>
  readonly container_name?: string
  readonly depends_on?: Record<string, { condition: string }>
  readonly healthcheck?: { test?: Array<string>; disable?: boolean }
  readonly volumes?: Array<string>
}

let services: Record<string, Service> = {}

/** Compose's resolved file; the machine's variables are left out, so the file's own defaults are read. */
const composeConfig = async (...args: Array<string>) => {
  const bin = ["/usr/bin/docker-compose", "/usr/local/bin/docker-compose"].find(existsSync)
  if (bin === undefined) throw new Error("docker-compose is missing: this test needs it (apt-get install docker-compose)")
  return promisify(execFile)(bin, ["-f", FILE, "config", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" }
  })
}

/** The value after `flag` in a command line. */
const option = (command: ReadonlyArray<string>, flag: string) => {
  const at = command.indexOf(flag)
  return at < 0 ? undefined : command[at + 1]
}

const nodes = () => Object.entries(services).filter(([, s]) => s.environment?.HERALD_ROLE !== undefined)
const natsServers = () => Object.entries(services).filter(([, s]) => s.image?.startsWith("nats:"))

describe("docker-compose.yml", () => {
  beforeAll(async () => {
    const { stdout } = await composeConfig()
    services = parse(stdout).services
  })

  it("is valid for Compose", async () => {
    // --quiet: only the validation, nothing printed, exit 0.
    const quiet = await composeConfig("--quiet")
    expect(quiet.stdout).toBe("")
    expect(Object.keys(services)).toEqual(expect.arrayContaining(["postgres", "worker", "gateway-sim", "smtp-sim"]))
  })

  it("runs three NATS servers in one cluster, with JetStream on a volume each, routed to each other", () => {
    const servers = natsServers()
    expect(servers.map(([name]) => name).sort()).toEqual(["nats-1", "nats-2", "nats-3"])
    const names = servers.map(([, s]) => option(s.command!, "--server_name"))
    expect(new Set(names).size).toBe(3)
    const volumes = new Set<string>()
    for (const [name, s] of servers) {
      const command = s.command!
      expect(option(command, "--server_name")).toBe(name)
      expect(option(command, "--cluster_name")).toBe("herald")
      expect(option(command, "--cluster")).toBe("nats://0.0.0.0:6222")
      expect(command).toContain("-js")
      const routes = option(command, "--routes")!.split(",").map((r) => new URL(r))
      const others = servers.map(([n]) => n).filter((n) => n !== name).sort()
      expect(routes.map((r) => r.hostname).sort()).toEqual(others)
      expect(routes.every((r) => r.port === "6222")).toBe(true)
      const store = option(command, "-sd")!
      const volume = s.volumes!.find((v) => v.split(":")[1] === store)
      expect(volume, `${name} keeps ${store} on a volume`).toBeDefined()
      volumes.add(volume!.split(":")[0]!)
      expect(s.healthcheck!.test!.join(" ")).toContain("/healthz?js-enabled-only=true")
    }
    expect(volumes.size).toBe(3)
  })

  it("points every Herald node at all three servers with R3, and sizes its Postgres pool", () => {
    const nats = natsServers().map(([name]) => name).sort()
    expect(nodes().length).toBeGreaterThanOrEqual(3)
    for (const [name, s] of nodes()) {
      const env = s.environment!
      const urls = env.NATS_URL!.split(",").map((u) => new URL(u))
      expect(urls.map((u) => u.hostname).sort(), name).toEqual(nats)
      expect(urls.every((u) => u.protocol === "nats:" && u.port === "4222"), name).toBe(true)
      expect(env.HERALD_NATS_REPLICAS, name).toBe("3")
      expect(Number(env.HERALD_DB_POOL), name).toBeGreaterThan(0)
      for (const dep of [...nats, "postgres"]) expect(s.depends_on?.[dep]?.condition, `${name} waits for ${dep}`).toBe("service_healthy")
    }
    // The sizing rule the file states, nodes × (pool + 1) under Postgres's default 100
    // max_connections: the api nodes and a few workers fit.
    const pool = Number(nodes()[0]![1].environment!.HERALD_DB_POOL)
    const apis = nodes().filter(([, s]) => s.environment!.HERALD_ROLE === "api").length
    expect((apis + 3) * (pool + 1)).toBeLessThan(100)
  })

  it("has two API nodes on distinct host ports and a worker service that scales", () => {
    const apis = nodes().filter(([, s]) => s.environment!.HERALD_ROLE === "api")
    expect(apis).toHaveLength(2)
    const published = apis.map(([, s]) => String(s.ports?.[0]?.published))
    expect(new Set(published).size).toBe(2)
    const workers = nodes().filter(([, s]) => s.environment!.HERALD_ROLE === "worker")
    expect(workers.map(([name]) => name)).toEqual(["worker"])
    // `--scale worker=N` needs both: a fixed host port or a container name would collide.
    expect(workers[0]![1].ports ?? []).toEqual([])
    expect(workers[0]![1].container_name).toBeUndefined()
  })

  it("runs the gateway simulator as its own service, which every node's gateways point at", () => {
    const sim = services["gateway-sim"]!
    expect(sim.command![0]).toBe("gateway-sim")
    const port = option(sim.command!, "--port")
    const callback = new URL(option(sim.command!, "--callback-url")!)
    expect(services[callback.hostname]?.environment?.HERALD_ROLE, "the simulator calls an api node back").toBe("api")
    for (const [name, s] of nodes()) {
      for (const key of ["GATEWAY_RBM_URL", "GATEWAY_WA_URL", "GATEWAY_CAPI_URL"]) {
        expect(s.environment![key], `${name} ${key}`).toBe(`http://gateway-sim:${port}`)
      }
    }
    // The nodes verify what the simulators sign: the same secrets everywhere.
    for (const key of ["GATEWAY_RBM_CLIENT_TOKEN", "GATEWAY_WA_APP_SECRET", "SMTP_FEEDBACK_SECRET", "HERALD_SECRETS_KEY"]) {
      const values = new Set([...nodes().map(([, s]) => s.environment![key]), sim.environment![key], services["smtp-sim"]!.environment![key]])
      expect(values.size, key).toBe(1)
    }
  })

  it("checks every Herald node's health on /health/ready", () => {
    for (const [name, s] of nodes()) {
      expect(s.healthcheck?.disable, name).not.toBe(true)
      expect(s.healthcheck!.test!.join(" "), name).toContain(`127.0.0.1:${s.environment!.PORT}/health/ready`)
    }
  })
})
