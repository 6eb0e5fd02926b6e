import { Duration, Effect } from "effect"
import type { JetStreamManager, KV } from "nats"
import { hostname } from "node:os"
import { NatsUnavailable } from "../../bus/Nats.ts"
import { decodeJson, encodeJson } from "./transport.ts"

export interface NodeInfo {
  readonly node_id: string
  readonly role: string
  readonly host: string
  readonly pid: number
  readonly started_at: string
}

const unavailable = (what: string) => (cause: unknown) => new NatsUnavailable({ message: `membership ${what}: ${String(cause)}` })

/**
 * Every membership operation answers within this, or fails: a node cut off from NATS must get
 * back to its loop (and fence itself) rather than wait on a request that will never be answered.
 */
const OPERATION_TIMEOUT = Duration.seconds(4)

const bounded = <A>(what: string, effect: Effect.Effect<A, NatsUnavailable>) =>
  Effect.timeoutFail(effect, { duration: OPERATION_TIMEOUT, onTimeout: () => new NatsUnavailable({ message: `membership ${what}: no answer in ${Duration.format(OPERATION_TIMEOUT)}` }) })

/**
 * Worker membership: each worker puts its entry every few seconds into a KV bucket whose TTL drops
 * entries that stop being renewed. The live set is what the bucket holds now, read from the
 * bucket's stream state (its subjects) in one request: listing the keys would create a consumer
 * each time, on a replicated stream a consumer leader election per worker every second.
 */
export const makeMembership = (kv: KV, jsm: JetStreamManager, bucket: string, info: NodeInfo) => {
  const stream = `KV_${bucket}`
  const subjectPrefix = `$KV.${bucket}.`
  const subjectOf = (nodeId: string) => `${subjectPrefix}${nodeId}`

  const heartbeat = bounded("heartbeat", Effect.tryPromise({ try: () => kv.put(info.node_id, encodeJson(info)), catch: unavailable("heartbeat") }))

  // Purged rather than deleted: a delete marker would stay in the stream, and the node with it in
  // the live set, until it aged out.
  const leave = bounded("leave", Effect.tryPromise({ try: () => jsm.streams.purge(stream, { filter: subjectOf(info.node_id) }), catch: unavailable("leave") })).pipe(Effect.ignore)

  const live = bounded(
    "list",
    Effect.tryPromise({
      try: async () => {
        const state = await jsm.streams.info(stream, { subjects_filter: `${subjectPrefix}>` })
        return Object.keys(state.state.subjects ?? {}).map((subject) => subject.slice(subjectPrefix.length)).sort()
      },
      catch: unavailable("list")
    })
  )

  const list = bounded(
    "list",
    Effect.flatMap(live, (ids) =>
      Effect.tryPromise({
        try: async () => {
          const nodes: Array<NodeInfo> = []
          for (const id of ids) {
            const entry = await kv.get(id)
            if (entry && entry.operation === "PUT") nodes.push(decodeJson(entry.value) as NodeInfo)
          }
          return nodes
        },
        catch: unavailable("list")
      }))
  )

  return { heartbeat, leave, live, list } as const
}

export const nodeInfo = (nodeId: string, role: string): NodeInfo => ({
  node_id: nodeId,
  role,
  host: hostname(),
  pid: process.pid,
  started_at: new Date().toISOString()
})

export type Membership = ReturnType<typeof makeMembership>
