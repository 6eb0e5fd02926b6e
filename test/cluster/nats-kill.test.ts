import { describe, it } from "@effect/vitest"
import { sleep, useClusterDeployment, Workload } from "../support/clusterWorkload.ts"
import { useDb, useIsolation } from "../support/e2e.ts"

// Fault 1 of ../shared/design/cluster.md: each NATS server of a 3-server cluster with
// HERALD_NATS_REPLICAS=3 killed (kill -9) and restarted with its disk, under load. Herald's nodes
// (one api node, two workers) must carry on without being restarted, a publish that fails during a
// leader election is retried (a client may see latency or a 503 with Retry-After, never a 500),
// and the workload ends exact.
//
// Not part of `npm test` (vitest.config.ts), like nats-replace.test.ts: on the nats-server 2.9.10
// this machine has, commands the cluster had acknowledged are sometimes gone after a restart (2 of
// the last 3 full suite runs on 2026-11-28: ten webhook deliveries whose Start commands JetStream
// acknowledged never reached their partition, the stream empty and a consumer's ack floor back at
// 0; in the other, a timer's command, which Herald now fires again: docs/actors.md). Herald cannot
// see a message its broker acknowledged and then dropped. It runs with `npm run test:cluster`.

const iso = useIsolation()
const db = useDb(iso)
const cluster = useClusterDeployment(iso, "nk")

describe("NATS servers lost under load", () => {
  it("each server in turn killed (kill -9) and restarted with its disk: exact, and no node restarted", async () => {
    await cluster.dep.fault("nats-kill", async () => {
      const load = await Workload.start(cluster.dep, db, 1)
      const steps: Array<Record<string, number>> = []
      let notCaughtUp: unknown
      for (let server = 0; server < 3 && notCaughtUp === undefined; server++) {
        // A broadcast per step, so that one is being sent while each server is down.
        const b = await load.broadcast(2_000)
        await load.untilProgress(b, 300)
        const killedAt = Date.now()
        load.mark(`kill -9 NATS server ${server}`)
        await cluster.nats.kill(server)
        await sleep(5_000)
        await cluster.nats.start(server)
        load.mark(`NATS server ${server} started`)
        // The next server is killed only once this one has caught up (two servers down is more
        // than R3 survives). If it never does, Herald is still checked, on the two that are current.
        notCaughtUp = await cluster.nats.awaitReady({ timeoutMs: 180_000 }).then(() => undefined, (error) => error)
        load.mark(notCaughtUp === undefined ? "cluster ready" : "cluster not caught up")
        steps.push({ server, cluster_ready_after_ms: Date.now() - killedAt })
      }
      console.log(JSON.stringify({ fault: "nats-kill", steps }))
      await cluster.dep.assertRecovered()
      await load.verify()
      if (notCaughtUp !== undefined) throw notCaughtUp
    })
  }, 1_500_000)
})
