import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { connect, type NatsConnection } from "nats"
import { eventually, useIsolation } from "../support/e2e.ts"
import { heraldEntry, type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor, NATS_URL } from "../support/isolation.ts"

// `herald admin nats-clean` against a real node of the file's deployment (its NATS prefix) and,
// beside it on the same NATS, the streams and a bucket of a deployment whose prefix starts like
// this one's (`<prefix>_b`), made as Herald makes them. It needs no database.

const iso = useIsolation()
const env = envFor(iso, { LOG_LEVEL: "warning" })
const prefix = iso.natsPrefix
const other = `${prefix}_b`
let node: HeraldProcess | undefined
let nc: NatsConnection

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const natsClean = async (args: ReadonlyArray<string>, stdin?: string): Promise<Run> => {
  const child = spawn(process.execPath, [...heraldEntry.argv, "admin", "nats-clean", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (d) => (stdout += d))
  child.stderr!.setEncoding("utf8").on("data", (d) => (stderr += d))
  child.stdin?.on("error", () => undefined)
  child.stdin?.end(stdin)
  const [code] = (await once(child, "close")) as [number | null]
  return { code, stdout, stderr }
}

/** The last line of stderr: the command's `{success:false, code, message}` (a question may come before it). */
const failureOf = (run: Run) => JSON.parse(run.stderr.trim().split("\n").at(-1)!) as { success: boolean; code: string; message: string }

const ours = (names: ReadonlyArray<string>) => names.filter((n) => n.startsWith(`${prefix.toUpperCase()}_`) || n.startsWith(`KV_${prefix}_`))
const isOther = (n: string) => n.startsWith(`${other.toUpperCase()}_`) || n.startsWith(`KV_${other}_`)

/** The streams of this file's two deployments (others' test files share the NATS server). */
const streamNames = async () => {
  const jsm = await nc.jetstreamManager()
  const names: Array<string> = []
  for await (const name of jsm.streams.names()) names.push(name)
  return ours(names).sort()
}

beforeAll(async () => {
  nc = await connect({ servers: NATS_URL })
  const jsm = await nc.jetstreamManager()
  await jsm.streams.add({ name: `${other}_DELIVERY`.toUpperCase(), subjects: [`${other}.delivery.>`] })
  const js = nc.jetstream()
  await js.publish(`${other}.delivery.0.k`, new TextEncoder().encode("{}"))
  const kv = await js.views.kv(`${other}_nodes`, { history: 1 })
  await kv.put("other-node", new TextEncoder().encode("{}"))
  node = await startHerald(env)
  // The node owns its partitions: their consumers are on its streams.
  await eventually(async () => {
    let consumers = 0
    for await (const info of jsm.streams.list()) if (info.config.name.startsWith(`${prefix.toUpperCase()}_`)) consumers += info.state.consumer_count
    expect(consumers).toBeGreaterThan(0)
  }, { timeoutMs: 120_000, intervalMs: 500 })
}, 300_000)

afterAll(async () => {
  await node?.kill()
  await nc?.close()
})

describe("herald admin nats-clean", () => {
  it("refuses while a node of the deployment runs, naming it; nothing removed", async () => {
    const before = await streamNames()
    expect(ours(before)).toEqual(expect.arrayContaining([`KV_${prefix}_leases`, `KV_${prefix}_nodes`]))
    expect(ours(before).filter((n) => !n.startsWith("KV_") && !isOther(n)).length).toBeGreaterThan(0)
    const refused = await natsClean(["--yes"])
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stdout).toBe("")
    const failure = failureOf(refused)
    expect(failure).toMatchObject({ success: false, code: "nodes_running" })
    expect(failure.message).toContain("nothing removed")
    expect(await streamNames()).toEqual(before)
  })

  it("once the nodes are stopped: asks, and an answer other than yes removes nothing", async () => {
    await node!.stop()
    node = undefined
    const before = await streamNames()
    // A stopped node leaves the membership bucket at once (or its entry lapses within 6 s).
    const declined = await eventually(async () => {
      const run = await natsClean([], "no\n")
      expect(failureOf(run).code).toBe("not_confirmed")
      return run
    }, { timeoutMs: 30_000, intervalMs: 1_000 })
    expect(declined.code).toBe(1)
    expect(declined.stderr).toContain(`Remove the deployment ${prefix}'s`)
    expect(failureOf(declined).message).toContain("nothing removed")
    expect(await streamNames()).toEqual(before)
  })

  it("with yes on the pipe: removes exactly the prefix's streams and buckets, says which, and leaves <prefix>_b's", async () => {
    const before = await streamNames()
    const mine = ours(before).filter((n) => !isOther(n))
    const others = before.filter(isOther)
    expect(others).toEqual([`KV_${other}_nodes`, `${other}_DELIVERY`.toUpperCase()].sort())
    const run = await natsClean([], "yes\n")
    expect(run.code, run.stderr).toBe(0)
    const printed = JSON.parse(run.stdout) as {
      prefix: string
      removed: { streams: Array<string>; buckets: Array<string>; consumers: number }
      skipped: Array<{ name: string }>
    }
    expect(printed.prefix).toBe(prefix)
    expect([...printed.removed.streams, ...printed.removed.buckets.map((b) => `KV_${b}`)].sort()).toEqual(mine)
    expect(printed.removed.buckets.sort()).toEqual([`${prefix}_leases`, `${prefix}_nodes`])
    // The node's partition consumers went with their streams.
    expect(printed.removed.consumers).toBeGreaterThan(0)
    expect(printed.skipped.map((s) => s.name).sort()).toEqual(others)
    const after = await streamNames()
    expect(ours(after).filter((n) => !isOther(n))).toEqual([])
    expect(after.filter(isOther)).toEqual(others)
    // What was not the deployment's is as it was: the other stream still holds its message.
    const info = await (await nc.jetstreamManager()).streams.info(`${other}_DELIVERY`.toUpperCase())
    expect(info.state.messages).toBe(1)
  })

  it("with nothing left of the deployment: removes nothing and says so, without asking", async () => {
    const run = await natsClean([])
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ prefix, removed: { streams: [], buckets: [], consumers: 0, messages: 0 } })
  })
})
