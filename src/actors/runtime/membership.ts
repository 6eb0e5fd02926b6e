import { Effect } from "effect"
import type { KV } from "nats"
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
 * Worker membership: each worker puts its entry every few seconds into a KV bucket whose TTL drops
 * entries that stop being renewed. The live set is what the bucket holds now.
 */
export const makeMembership = (kv: KV, info: NodeInfo) => {
  const heartbeat = Effect.tryPromise({ try: () => kv.put(info.node_id, encodeJson(info)), catch: unavailable("heartbeat") })

  const leave = Effect.tryPromise({ try: () => kv.delete(info.node_id), catch: unavailable("leave") }).pipe(Effect.ignore)

  const live = Effect.tryPromise({
    try: async () => {
      const ids: Array<string> = []
      for await (const key of await kv.keys()) ids.push(key)
      return ids.sort()
    },
    catch: unavailable("list")
  })

  const list = Effect.tryPromise({
    try: async () => {
      const nodes: Array<NodeInfo> = []
      // Keys first: awaiting other requests inside the keys() iteration cuts it short.
      const keys: Array<string> = []
      for await (const key of await kv.keys()) keys.push(key)
      for (const key of keys) {
        const entry = await kv.get(key)
        if (entry && entry.operation === "PUT") nodes.push(decodeJson(entry.value) as NodeInfo)
      }
      return nodes
    },
    catch: unavailable("list")
  })

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
