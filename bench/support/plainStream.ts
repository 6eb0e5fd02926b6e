// A JetStream work-queue stream with one durable pull consumer, for the baselines that measure
// JetStream alone (no Herald): bench/actors' plain loop and bench/webhooks' design floor.
import { AckPolicy, connect, DeliverPolicy, type JetStreamClient, RetentionPolicy, StorageType } from "nats"
import { NATS_URL } from "../../test/support/isolation.ts"

/** Stream `<PREFIX>_<NAME>` on subjects `<prefix>.<name>.>`, consumer `<name>`; `close` deletes it. */
export const plainStream = async (prefix: string, name: string, maxAckPending: number) => {
  const nc = await connect({ servers: NATS_URL, noAsyncTraces: true })
  const jsm = await nc.jetstreamManager()
  const js = nc.jetstream()
  const stream = `${prefix.toUpperCase()}_${name.toUpperCase()}`
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.${name}.>`], retention: RetentionPolicy.Workqueue, storage: StorageType.File })
  await jsm.consumers.add(stream, { durable_name: name, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, max_ack_pending: maxAckPending })
  const close = async () => {
    await jsm.streams.delete(stream).catch(() => false)
    await nc.close()
  }
  return { js, stream, durable: name, subject: `${prefix}.${name}`, close }
}

/** Publishes `n` messages with at most `window` awaiting their acknowledgement, as a relay does. */
export const publishPipelined = async (js: JetStreamClient, n: number, subjectOf: (i: number) => string, payload: Uint8Array, window: number) => {
  const inflight = new Set<Promise<unknown>>()
  for (let i = 0; i < n; i++) {
    const p: Promise<unknown> = js.publish(subjectOf(i), payload).then(() => inflight.delete(p))
    inflight.add(p)
    if (inflight.size >= window) await Promise.race(inflight)
  }
  await Promise.all(inflight)
}
