import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ConsumerInfo } from "nats"
import { Nats } from "../../bus/Nats.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { LEASE_BUCKET } from "./ActorRuntime.ts"
import { makeLeases } from "./leases.ts"
import { makeMembership, nodeInfo } from "./membership.ts"

export interface PartitionOwner {
  readonly partition: number
  /** The node holding the partition's lease now; null while nobody does (a takeover in progress). */
  readonly owner: string | null
  readonly epoch: number
  readonly since: string
}

export interface StreamBacklog {
  /** Commands in the kind's stream not yet delivered to its partition consumers. */
  readonly pending: number
  /** Delivered to an owner and not yet acknowledged (being applied, or held). */
  readonly ackPending: number
  /** Delivered more than once and not yet acknowledged. */
  readonly redelivered: number
}

/**
 * What an operator looks at (`herald admin partitions`, the console's operator view): the live
 * nodes, each actor kind's partitions with their owners, and each kind's stream backlog. Read from
 * the membership and lease buckets, the fence rows and JetStream's consumer states; nothing here
 * takes part in ownership.
 */
export class ClusterView extends Effect.Service<ClusterView>()("herald/actors/ClusterView", {
  effect: Effect.gen(function*() {
    const nats = yield* Nats
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig

    const partitions = Effect.gen(function*() {
      const leases = makeLeases(yield* nats.kv("leases", LEASE_BUCKET), config.nodeId)
      const { jsm } = yield* nats.connected
      const membership = makeMembership(yield* nats.kv("nodes", LEASE_BUCKET), jsm, nats.names.bucket("nodes"), nodeInfo(config.nodeId, "viewer"))
      const [held, nodes, epochs] = yield* Effect.all([
        leases.list,
        membership.list,
        sql<{ kind: string; partition: number; epoch: string; owner: string; acquiredAt: Date }>`
          SELECT kind, partition, epoch, owner, acquired_at FROM partition_epochs ORDER BY kind, partition`.pipe(Effect.orDie)
      ])
      const owners = new Map(held.map((l) => [l.key, l]))
      const byKind: Record<string, Array<PartitionOwner>> = {}
      for (const e of epochs) {
        const lease = owners.get(`${e.kind}.${e.partition}`)
        ;(byKind[e.kind] ??= []).push({
          partition: e.partition,
          // The fence row remembers the last owner; only a live lease makes it the current one.
          owner: lease?.node ?? null,
          epoch: Number(e.epoch),
          since: new Date(e.acquiredAt).toISOString()
        })
      }
      return { partitionsPerKind: config.partitions, nodes: nodes.sort((a, b) => a.node_id.localeCompare(b.node_id)), byKind }
    })

    /** A kind's backlog, summed over its partitions' consumers (a partition not owned yet has none). */
    const backlog = (kind: string) =>
      Effect.gen(function*() {
        const { jsm } = yield* nats.connected
        const stream = nats.names.stream(kind)
        // Found by their subjects: a consumer's name carries its owner's epoch (transport.ts).
        const partitions = new Set(Array.from({ length: config.partitions }, (_, p) => nats.names.subject(kind, p, ">")))
        const infos = yield* Effect.tryPromise(async () => {
          const found: Array<ConsumerInfo> = []
          for await (const info of jsm.consumers.list(stream)) if (partitions.has(info.config.filter_subject ?? "")) found.push(info)
          return found
        }).pipe(Effect.orElseSucceed((): Array<ConsumerInfo> => []))
        const total: { pending: number; ackPending: number; redelivered: number } = { pending: 0, ackPending: 0, redelivered: 0 }
        for (const info of infos) {
          total.pending += info.num_pending
          total.ackPending += info.num_ack_pending
          total.redelivered += info.num_redelivered
        }
        return total satisfies StreamBacklog
      })

    return { partitions, backlog } as const
  })
}) {}
