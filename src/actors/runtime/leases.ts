import { Duration, Effect, Schema } from "effect"
import type { KV } from "nats"
import { NatsUnavailable } from "../../bus/Nats.ts"
import { decodeJson, encodeJson } from "./transport.ts"

/** A held lease. `revision` is the latest (it changes at every renewal). */
export interface Lease {
  readonly kind: string
  readonly partition: number
  readonly key: string
  /** Revision of the entry when it was created: the fencing token (ACTORS.md, Ownership). */
  readonly acquiredRevision: number
  revision: number
  /** Tokens of this lease's latest writes, to recognise one whose answer was lost. */
  recentWrites?: Array<string>
}

export class LeaseLost extends Schema.TaggedError<LeaseLost>()("LeaseLost", {
  key: Schema.String,
  message: Schema.String
}) {}

export const leaseKey = (kind: string, partition: number) => `${kind}.${partition}`

export interface LeaseValue {
  readonly node: string
  readonly acquired_at: string
  /** Changes at every write: a write whose answer was lost is recognised as this node's own. */
  readonly write?: string
}

const unavailable = (what: string) => (cause: unknown) => new NatsUnavailable({ message: `lease ${what}: ${String(cause)}` })

/** A lease operation answers within this or fails: a node cut off from NATS gets back to its loop. */
const OPERATION_TIMEOUT = Duration.seconds(4)
const bounded = <A, E>(what: string, effect: Effect.Effect<A, E | NatsUnavailable>) =>
  Effect.timeoutFail(effect, { duration: OPERATION_TIMEOUT, onTimeout: () => new NatsUnavailable({ message: `lease ${what}: no answer in ${Duration.format(OPERATION_TIMEOUT)}` }) })

const isConflict = (cause: unknown) => /wrong last sequence|key exists|10071/i.test(String(cause))

/**
 * Leases on (kind, partition) in a KV bucket whose TTL is the lease's lifetime: `create` succeeds
 * only when nobody holds it, `update` at the last revision renews it, and a holder that stops
 * renewing simply loses it when the entry ages out.
 */
export const makeLeases = (kv: KV, nodeId: string) => {
  let writes = 0
  const value = (write: string) => encodeJson({ node: nodeId, acquired_at: new Date().toISOString(), write } satisfies LeaseValue)
  /** The entry's revision when its last write is one of `ours` (its answer was lost): the lease is still held. */
  const ownWrite = (key: string, ours: ReadonlyArray<string>) =>
    Effect.tryPromise({ try: () => kv.get(key), catch: (cause) => cause }).pipe(
      Effect.map((entry) => {
        if (entry === null || entry.operation !== "PUT") return undefined
        const v = decodeJson(entry.value) as LeaseValue
        return v.node === nodeId && v.write !== undefined && ours.includes(v.write) ? entry.revision : undefined
      }),
      Effect.orElseSucceed(() => undefined)
    )

  /** Some(lease) when acquired, None when someone holds it. */
  const acquire = (kind: string, partition: number) =>
    bounded("create", Effect.tryPromise({ try: () => kv.create(leaseKey(kind, partition), value(`${nodeId}:${++writes}`)), catch: (cause) => cause }).pipe(
      Effect.map((revision): Lease | undefined => ({ kind, partition, key: leaseKey(kind, partition), acquiredRevision: revision, revision })),
      Effect.catchAll((cause) => (isConflict(cause) ? Effect.succeed(undefined) : Effect.fail(unavailable("create")(cause))))
    ))

  /**
   * Renews at the last revision; a conflict means someone else holds it now, unless the entry's
   * last write is one of this lease's own whose answer was lost (a timeout during a leader
   * election, a renewal given up on locally): then it is still held, and renewed at that revision
   * (the lost write is older than this renewal, so it cannot stand for it).
   */
  const renew = (lease: Lease, adopted = false): Effect.Effect<number, LeaseLost | NatsUnavailable> =>
    Effect.suspend(() => {
      const write = `${nodeId}:${++writes}`
      const recent = (lease.recentWrites ??= [])
      recent.push(write)
      if (recent.length > 4) recent.shift()
      return Effect.tryPromise({ try: () => kv.update(lease.key, value(write), lease.revision), catch: (cause) => cause }).pipe(
        Effect.tap((revision) => Effect.sync(() => (lease.revision = revision))),
        Effect.catchAll((cause): Effect.Effect<number, LeaseLost | NatsUnavailable> =>
          !isConflict(cause)
            ? Effect.fail(unavailable("renew")(cause))
            : Effect.flatMap(adopted ? Effect.succeed(undefined) : ownWrite(lease.key, recent), (revision) => {
              if (revision === undefined) return Effect.fail(new LeaseLost({ key: lease.key, message: `lease ${lease.key} was taken or expired` }))
              lease.revision = revision
              return renew(lease, true)
            })
        )
      )
    })

  const deleteAt = (key: string, revision: number) => Effect.tryPromise({ try: () => kv.delete(key, { previousSeq: revision }), catch: (cause) => cause })

  /**
   * Gives the lease up, only if it is still ours. The entry may be at a later revision than the one
   * this node knows: a renewal was in flight when the hand-off released, or its answer was lost.
   * When the entry's last write is one of this lease's own, it is deleted at that revision; left
   * alone, the next owner would wait out the lease's whole lifetime (seen as a partition unowned
   * for ten seconds in a rolling restart).
   */
  const release = (lease: Lease) =>
    bounded("release", deleteAt(lease.key, lease.revision).pipe(
      Effect.catchAll((cause) =>
        !isConflict(cause)
          ? Effect.fail(unavailable("release")(cause))
          : Effect.flatMap(ownWrite(lease.key, lease.recentWrites ?? []), (revision) => revision === undefined ? Effect.void : deleteAt(lease.key, revision))
      )
    )).pipe(Effect.ignore)

  /** Every lease held right now: key → holder and revision. */
  const list = bounded("list", Effect.tryPromise({
    try: async () => {
      const out: Array<{ key: string; node: string; revision: number; acquiredAt: string }> = []
      // Keys first: awaiting other requests inside the keys() iteration cuts it short.
      const keys: Array<string> = []
      for await (const key of await kv.keys()) keys.push(key)
      for (const key of keys) {
        const entry = await kv.get(key)
        if (entry && entry.operation === "PUT") {
          const v = decodeJson(entry.value) as LeaseValue
          out.push({ key, node: v.node, revision: entry.revision, acquiredAt: v.acquired_at })
        }
      }
      return out
    },
    catch: unavailable("list")
  }))

  return { acquire, renew, release, list } as const
}

export type Leases = ReturnType<typeof makeLeases>
