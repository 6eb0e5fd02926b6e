import { describe, expect, it } from "@effect/vitest"
import { sleep, useClusterDeployment, Workload } from "../support/clusterWorkload.ts"
import { useDb, useIsolation } from "../support/e2e.ts"

// Fault 2 of ../shared/design/cluster.md: the NATS server leading most streams replaced with an
// empty disk under load, on a 3-server cluster with HERALD_NATS_REPLICAS=3.
//
// Not part of `npm test` (vitest.config.ts): on the nats-server 2.9.10 this machine has, all three
// replicas of a stream written during the empty server's catch-up can log "stream store EOF" and
// reset their cluster state, and commands the cluster had acknowledged are lost (seen in 2 of 4
// full suite runs, never alone). Herald cannot see a message its broker acknowledged and then
// dropped; docs/operations.md ("Known NATS problems") says what to run. It runs with
// `npm run test:cluster`, which sets HERALD_NATS_SERVER_FAULTS=1.

const iso = useIsolation()
const db = useDb(iso)
const cluster = useClusterDeployment(iso, "nr")

describe("a NATS server replaced under load", () => {
  it("the server leading most streams replaced (killed, its store deleted, started empty under its name): it catches up, exact", async () => {
    await cluster.dep.fault("nats-replace", async () => {
      const load = await Workload.start(cluster.dep, db, 1)
      const b = await load.broadcast(3_000)
      await load.untilProgress(b, 300)
      const leaders = await cluster.nats.streamLeaders()
      const server = leaders.indexOf(Math.max(...leaders))
      const killedAt = Date.now()
      load.mark(`kill -9 NATS server ${server}`)
      await cluster.nats.kill(server)
      await sleep(5_000)
      await cluster.nats.replace(server)
      load.mark(`NATS server ${server} started empty`)
      // Herald is checked even if the new server never catches up (the other two are a quorum).
      const notCaughtUp = await cluster.nats.awaitReady({ timeoutMs: 180_000 }).then(() => undefined, (error) => error)
      load.mark(notCaughtUp === undefined ? "cluster ready" : "cluster not caught up")
      console.log(JSON.stringify({ fault: "nats-replace", server, leaders, cluster_ready_after_ms: Date.now() - killedAt }))
      await cluster.dep.assertRecovered()
      await load.verify()
      if (notCaughtUp !== undefined) throw notCaughtUp
      // Every stream (and KV bucket) is on all three servers again, the replaced one included.
      const placed = await cluster.nats.placement()
      expect(placed.length).toBeGreaterThan(0)
      expect(placed.filter((p) => p.replicas !== 3 || !p.servers.includes(server))).toEqual([])
    })
  }, 1_500_000)
})
