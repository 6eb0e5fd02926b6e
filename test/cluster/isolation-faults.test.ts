import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Deployment, metricOwned, sleep, Workload } from "../support/clusterWorkload.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type NatsCluster, startNatsCluster } from "../support/natsCluster.ts"
import { TcpProxy } from "../support/TcpProxy.ts"

// Faults 6 and 7 of ../shared/design/cluster.md, on a 3-server NATS cluster with
// HERALD_NATS_REPLICAS=3: Postgres unreachable for 10 s (every Herald process reaches it through a
// proxy this file switches off and on), and a worker cut off from NATS (its NATS_URL lists three
// proxies, one per server, which stop forwarding without closing anything: a partition, not a
// crash). The cut worker is the one the bot's sender partition is assigned to, so the broadcast
// and the single sends are running on it when it is cut.

const iso = useIsolation()
const db = useDb(iso)
let nats: NatsCluster
let dep: Deployment
let pg: TcpProxy
const natsProxies: Array<TcpProxy> = []
const CUT = 1

beforeAll(async () => {
  nats = await startNatsCluster(`if${iso.id.slice(0, 4)}`)
  pg = await TcpProxy.reserve({ host: "127.0.0.1", port: Number(new URL(iso.databaseUrl).port || 5432) })
  await pg.up()
  for (const port of nats.ports) {
    const proxy = await TcpProxy.reserve({ host: "127.0.0.1", port })
    await proxy.up()
    natsProxies.push(proxy)
  }
  const proxied = new URL(iso.databaseUrl)
  proxied.port = String(pg.port)
  dep = await Deployment.start({
    iso,
    nats,
    name: `if-${iso.id}`,
    nodeEnv: { DATABASE_URL: proxied.toString() },
    workerEnv: (i): Record<string, string> => (i === CUT ? { NATS_URL: natsProxies.map((p) => `nats://127.0.0.1:${p.port}`).join(",") } : {}),
    senderOwner: CUT
  })
}, 300_000)
afterAll(async () => {
  await dep?.close()
  await Promise.all([pg, ...natsProxies].map((p) => p?.down()))
  await nats?.stop()
}, 60_000)

describe("dependencies out of reach under load", () => {
  it("Postgres unreachable for 10 s: 503 with Retry-After, never a 500; every node recovers by itself; exact", async () => {
    await dep.fault("postgres-unreachable", async () => {
      const load = await Workload.start(dep, db, 6)
      const b = await load.broadcast(2_000)
      await load.untilProgress(b, 300)
      load.mark("Postgres unreachable")
      await pg.down()
      const downAt = Date.now()
      try {
        await sleep(10_000)
      } finally {
        await pg.up()
        load.mark("Postgres back")
      }
      await dep.assertRecovered()
      const during = load.answers.filter((a) => a.at >= downAt - load.startedAtMs && a.at <= downAt + 10_000 - load.startedAtMs)
      console.log(JSON.stringify({ fault: "postgres-unreachable", recovered_after_ms: Date.now() - downAt, answers_during: during.length, unavailable_during: during.filter((a) => a.status === 503).length }))
      await load.verify()
    })
  }, 1_200_000)

  it("a worker cut off from NATS for 20 s: it fences itself, the other takes over, after the cut heals nothing is doubled: exact", async () => {
    await dep.fault("nats-cut", async () => {
      const cut = dep.workers[CUT]!
      const other = dep.workers.find((w) => w !== cut)!
      const load = await Workload.start(dep, db, 7)
      const b = await load.broadcast(2_000)
      await load.untilProgress(b, 300)
      expect((await dep.ownership()).owners.get(`sender/${dep.senderPartition}`)).toEqual([cut.nodeId])
      const cutAt = Date.now()
      load.mark(`cut ${cut.nodeId} from NATS`)
      for (const proxy of natsProxies) proxy.cut()
      try {
        // It cannot renew its leases: it stops every partition (by its own gauge, since its
        // /health/ready says NATS is down and lists none), and the other owns them all.
        const fencedMs = await eventually(async () => {
          expect(await metricOwned(cut.process.metricsUrl)).toBe(0)
          return Date.now() - cutAt
        }, { timeoutMs: 60_000, intervalMs: 200 })
        const takenOverMs = await dep.awaitOwnedBy(other, cutAt)
        await sleep(Math.max(0, cutAt + 20_000 - Date.now()))
        console.log(JSON.stringify({ fault: "nats-cut", worker: cut.nodeId, fenced_ms: fencedMs, taken_over_ms: takenOverMs, healed_ms: Date.now() - cutAt }))
      } finally {
        for (const proxy of natsProxies) proxy.heal()
        load.mark("healed")
      }
      await dep.assertRecovered()
      await load.verify()
    })
  }, 1_200_000)
})
