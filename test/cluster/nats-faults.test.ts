import { describe, expect, it } from "@effect/vitest"
import { useClusterDeployment } from "../support/clusterWorkload.ts"
import { useIsolation } from "../support/e2e.ts"

// The 3-server NATS cluster with HERALD_NATS_REPLICAS=3 that faults 1 and 2 of
// ../shared/design/cluster.md run on: every stream and bucket Herald creates is replicated on all
// three. The faults themselves (a server killed, a server replaced) are in nats-kill.test.ts and
// nats-replace.test.ts, run by `npm run test:cluster` (see there why not by `npm test`).

const iso = useIsolation()
const cluster = useClusterDeployment(iso, "nf")

describe("the NATS cluster", () => {
  it("every stream and KV bucket Herald created is on the three servers (HERALD_NATS_REPLICAS=3)", async () => {
    const placed = await cluster.nats.placement()
    expect(placed.length).toBeGreaterThan(0)
    expect(placed.filter((p) => p.replicas !== 3 || p.servers.length !== 3)).toEqual([])
  })
})
