import { describe, expect, it } from "@effect/vitest"
import { sampleOwnership, sleep, useClusterDeployment, Workload } from "../support/clusterWorkload.ts"
import { useDb, useIsolation } from "../support/e2e.ts"

// Faults 3, 4 and 5 of ../shared/design/cluster.md: a worker killed, a worker paused past its
// leases, a rolling restart of every worker, each during a broadcast, single sends and webhook
// events, on a 3-server NATS cluster with HERALD_NATS_REPLICAS=3. The worker hit is the one
// sending the broadcast (owner of the bot's sender partition).

const iso = useIsolation()
const db = useDb(iso)
const cluster = useClusterDeployment(iso, "wf")

describe("workers lost under load", () => {
  it("a worker killed (kill -9): its partitions owned again within 10 s; exact", async () => {
    await cluster.dep.fault("worker-kill", async () => {
      const load = await Workload.start(cluster.dep, db, 3)
      const b = await load.broadcast(2_000)
      await load.untilProgress(b, 300)
      const victim = await cluster.dep.senderOwner()
      const survivor = cluster.dep.workers.find((w) => w !== victim)!
      const killedAt = Date.now()
      load.mark(`kill -9 ${victim.nodeId}`)
      await victim.process.kill()
      const ownedAgainMs = await cluster.dep.awaitOwnedBy(survivor, killedAt)
      console.log(JSON.stringify({ fault: "worker-kill", victim: victim.nodeId, owned_again_ms: ownedAgainMs }))
      expect(ownedAgainMs).toBeLessThanOrEqual(10_000)
      // The survivor carries the load alone for a while; the victim comes back once it is checked.
      await sleep(5_000)
      await load.verify()
      load.mark(`restart ${victim.nodeId}`)
      await cluster.dep.restart(victim)
      await cluster.dep.assertRecovered()
    })
  }, 1_200_000)

  it("a worker paused (SIGSTOP) 20 s, past its leases' 6 s, then resumed: the other takes over, exact, no recipient reached twice", async () => {
    await cluster.dep.fault("worker-pause", async () => {
      const load = await Workload.start(cluster.dep, db, 4)
      const b = await load.broadcast(2_000)
      await load.untilProgress(b, 300)
      const victim = await cluster.dep.senderOwner()
      const survivor = cluster.dep.workers.find((w) => w !== victim)!
      const sampler = sampleOwnership(cluster.dep)
      const pausedAt = Date.now()
      load.mark(`SIGSTOP ${victim.nodeId}`)
      cluster.dep.pause(victim)
      // While it sleeps the other takes every partition.
      const takenOverMs = await cluster.dep.awaitOwnedBy(survivor, pausedAt)
      load.mark("taken over")
      await sleep(Math.max(0, pausedAt + 20_000 - Date.now()))
      load.mark(`SIGCONT ${victim.nodeId}`)
      cluster.dep.resume(victim)
      // It wakes, finds its leases gone, and rejoins: one owner per partition again.
      await cluster.dep.assertRecovered()
      const { doubles, samples, unknown } = await sampler.stop()
      // Two workers reporting one partition at once is a report, not a write (the fence and the
      // lease check stop those): printed for the record, the workload's exactness is the test.
      console.log(JSON.stringify({ fault: "worker-pause", victim: victim.nodeId, taken_over_ms: takenOverMs, samples, unknown, reported_twice: doubles.length, first: doubles.slice(0, 5) }))
      await load.verify()
    })
  }, 1_200_000)

  it("a rolling restart of every worker (SIGTERM, exit, start, the next): exact, no partition unowned for more than 10 s", async () => {
    await cluster.dep.fault("rolling-restart", async () => {
      const load = await Workload.start(cluster.dep, db, 5)
      const sampler = sampleOwnership(cluster.dep, { origin: load.startedAtMs })
      const steps: Array<Record<string, unknown>> = []
      for (const worker of cluster.dep.workers) {
        // A broadcast per step, under way when its worker stops.
        const b = await load.broadcast(2_000)
        await load.untilProgress(b, 300)
        load.mark(`SIGTERM ${worker.nodeId}`)
        const { code, ms } = await cluster.dep.stop(worker)
        expect(code, worker.process.output().slice(-3_000)).toBe(0)
        await cluster.dep.restart(worker)
        load.mark(`${worker.nodeId} ready`)
        await cluster.dep.awaitFullOwnership()
        steps.push({ worker: worker.nodeId, stopped_in_ms: ms })
      }
      const { samples, unknown, longestGapMs, gapsOver, longestGaps } = await sampler.stop()
      // Where the longest gaps lay, beside the marks (on the workload's clock), for the record.
      console.log(JSON.stringify({ fault: "rolling-restart", steps, samples, unknown, longest_unowned_ms: longestGapMs, longest: longestGaps(8), marks: load.marks }))
      expect(samples).toBeGreaterThan(10)
      expect(gapsOver(10_000)).toEqual([])
      await cluster.dep.assertRecovered()
      await load.verify()
    })
  }, 1_200_000)
})
