import { SqlClient } from "@effect/sql"
import { Duration, Effect, Queue, Schedule } from "effect"
import { headers as natsHeaders } from "nats"
import { randomUUID } from "node:crypto"
import { Nats } from "../../bus/Nats.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { currentTraceparent, TRACEPARENT } from "../../observability/Tracing.ts"
import { Storage } from "../../storage/Migrations.ts"
import { ActorClient, encoderOf } from "./ActorClient.ts"
import type { ActorKind } from "./ActorKind.ts"
import { partitionOf } from "./partitioning.ts"
import { encodeBatch } from "./streamCommand.ts"
import { commandSubject, encodeJson, Header, keyOfSubject } from "./transport.ts"

/** The trace the rows' commands continue (headers of the message they travel in), when tracing is on. */
const traceHeaders = Effect.map(currentTraceparent, (traceparent) => (traceparent === undefined ? null : JSON.stringify({ [TRACEPARENT]: traceparent })))

/** Rows per relay round: at 500 the relay fell seconds behind a burst of fanned-out events. */
const BATCH = 2_000
/**
 * Commands per JetStream message at most, and their JSON's bytes (or half the server's
 * max_payload, if smaller). Bounded so a partition's in-flight allowance (max_ack_pending
 * messages) stays a bounded number of commands.
 */
const PER_MESSAGE = 128
const MESSAGE_BYTES = 256 * 1024
const IDLE_POLL = Duration.millis(250)
/**
 * A round publishes inside its transaction: well under the sessions' idle-in-transaction limit
 * (HERALD_DB_IDLE_IN_TRANSACTION_MS, 10 s). A round that runs out rolls back and the next one
 * publishes the same batches under the same ids.
 */
const PUBLISH_BUDGET = Duration.seconds(4)
const KEEP_PUBLISHED = "1 hour"

/**
 * The transactional outbox (ACTORS.md). `enqueue` writes a command for an actor as a row, inside
 * the caller's transaction, next to the domain rows it belongs with; the relay publishes pending
 * rows to JetStream and marks them. Rows of one (kind, partition) travel together, up to
 * PER_MESSAGE in one message (the partition's consumer splits it, streamCommand.ts); a row alone
 * goes as a plain message with its own message id. Which rows make a batch is committed before
 * the batch is published, and the batch's message id is its first row's, so a re-publish after a
 * crash carries the same rows under the same id and is deduplicated. A transaction-scoped
 * advisory lock lets one relay run at a time across nodes, which keeps rows published in commit
 * order.
 */
export class Outbox extends Effect.Service<Outbox>()("herald/actors/Outbox", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const nats = yield* Nats
    const config = yield* AppConfig
    const storage = yield* Storage
    const client = yield* ActorClient
    const wake = yield* Queue.sliding<void>(1)

    const nudge = Effect.asVoid(Queue.offer(wake, undefined))

    /** Call inside the transaction that writes the domain rows this command belongs with. */
    const enqueue = <K extends ActorKind.Any>(kind: K, key: string, command: ActorKind.Command<K>, options: { readonly msgId?: string } = {}) =>
      Effect.gen(function*() {
        yield* client.ensureKind(kind)
        const payload = yield* Effect.orDie(encoderOf(kind)(command))
        const subject = commandSubject(nats.names, kind.name, partitionOf(key, config.partitions), key)
        const headers = yield* traceHeaders
        yield* sql`
          INSERT INTO actor_outbox (subject, msg_id, payload, headers)
          VALUES (${subject}, ${options.msgId ?? randomUUID()}, ${JSON.stringify(payload)}::jsonb, ${headers}::jsonb)`
      })

    /** Many commands of one kind in one INSERT (same transaction rule as `enqueue`). */
    const enqueueMany = <K extends ActorKind.Any>(kind: K, commands: ReadonlyArray<{ readonly key: string; readonly command: ActorKind.Command<K>; readonly msgId?: string }>) =>
      Effect.gen(function*() {
        if (commands.length === 0) return
        yield* client.ensureKind(kind)
        const encode = encoderOf(kind)
        const rows = yield* Effect.forEach(commands, (c) =>
          Effect.map(Effect.orDie(encode(c.command)), (payload) => ({
            subject: commandSubject(nats.names, kind.name, partitionOf(c.key, config.partitions), c.key),
            msgId: c.msgId ?? randomUUID(),
            payload: JSON.stringify(payload)
          })))
        const headers = yield* traceHeaders
        yield* sql`
          INSERT INTO actor_outbox (subject, msg_id, payload, headers)
          SELECT subject, msg_id, payload::jsonb, ${headers}::jsonb
          FROM unnest(${rows.map((r) => r.subject)}::text[], ${rows.map((r) => r.msgId)}::text[], ${rows.map((r) => r.payload)}::text[])
            AS t(subject, msg_id, payload)`
      })

    /**
     * One round, in one transaction under the relay's lock: publishes the batches an earlier round
     * assigned (committed, so a round that died between publishing and marking publishes the same
     * rows under the same message ids again, which JetStream drops), marks them, then assigns the
     * next pending rows to batches for the next round. Returns how many rows it published and
     * assigned, or undefined when another node's relay holds the lock.
     */
    const relayOnce = Effect.gen(function*() {
      const { nc } = yield* nats.connected
      const maxBytes = Math.min(MESSAGE_BYTES, Math.floor((nc.info?.max_payload ?? 1_048_576) / 2))
      return yield* Effect.gen(function*() {
        const [lock] = yield* sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtext('herald.actor_outbox')) AS locked`
        if (!lock?.locked) return undefined
        const rows = yield* sql<{ outboxId: string; subject: string; msgId: string; payload: unknown; headers: Record<string, string> | null; batch: string }>`
          SELECT outbox_id, subject, msg_id, payload, headers, batch FROM actor_outbox
          WHERE published_at IS NULL AND batch IN (
            SELECT batch FROM actor_outbox WHERE published_at IS NULL AND batch IS NOT NULL ORDER BY outbox_id LIMIT ${BATCH})
          ORDER BY outbox_id`
        if (rows.length > 0) {
          const batches = new Map<string, Array<(typeof rows)[number]>>()
          for (const row of rows) {
            const batch = batches.get(row.batch)
            if (batch === undefined) batches.set(row.batch, [row])
            else batch.push(row)
          }
          // In order of their first rows: a key's commands are in one lane, in order.
          yield* Effect.forEach(
            batches,
            ([leader, batch]) => {
              const h = natsHeaders()
              if (batch.length === 1) {
                const [row] = batch
                for (const [k, v] of Object.entries(row!.headers ?? {})) h.set(k, v)
                return nats.publish(row!.subject, encodeJson(row!.payload), { msgID: row!.msgId, headers: h, budget: PUBLISH_BUDGET })
              }
              h.set(Header.batch, String(batch.length))
              const body = encodeBatch(batch.map((row) => ({ key: keyOfSubject(row.subject), payload: row.payload, headers: row.headers })))
              return nats.publish(batch[0]!.subject, body, { msgID: `herald-outbox-batch:${leader}`, headers: h, budget: PUBLISH_BUDGET })
            },
            { concurrency: "unbounded", discard: true }
          )
          yield* sql`UPDATE actor_outbox SET published_at = now() WHERE outbox_id = ANY(${rows.map((r) => r.outboxId)}::bigint[])`
        }
        const pending = yield* sql<{ outboxId: string; subject: string; bytes: number }>`
          SELECT outbox_id, subject, octet_length(payload::text) + coalesce(octet_length(headers::text), 0) AS bytes FROM actor_outbox
          WHERE published_at IS NULL AND batch IS NULL ORDER BY outbox_id LIMIT ${BATCH}`
        if (pending.length > 0) {
          const leaders = assignBatches(pending, maxBytes)
          yield* sql`
            UPDATE actor_outbox o SET batch = t.batch
            FROM unnest(${pending.map((r) => r.outboxId)}::bigint[], ${leaders}::bigint[]) AS t(outbox_id, batch)
            WHERE o.outbox_id = t.outbox_id`
        }
        return { published: rows.length, assigned: pending.length }
      }).pipe(sql.withTransaction)
    })

    yield* Effect.gen(function*() {
      yield* storage.awaitReady
      for (;;) {
        const round = yield* relayOnce.pipe(
          Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("outbox relay failed; retrying", cause), "failed" as const))
        )
        // Rows assigned are published by the next round, at once.
        if (round !== undefined && round !== "failed" && (round.assigned > 0 || round.published >= BATCH)) continue
        yield* Queue.take(wake).pipe(Effect.timeoutOption(round === "failed" ? Duration.seconds(1) : IDLE_POLL))
      }
    }).pipe(Effect.forkScoped)

    yield* sql`DELETE FROM actor_outbox WHERE published_at < now() - ${KEEP_PUBLISHED}::interval`.pipe(
      Effect.zipRight(Effect.void),
      Effect.catchAllCause((cause) => Effect.logWarning("outbox prune failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.minutes(1))),
      Effect.delay(Duration.minutes(1)),
      Effect.forkScoped
    )

    return { enqueue, enqueueMany, nudge, relayOnce } as const
  })
}) {}

/**
 * Rows (in outbox order) to batches: each row's batch is named by its first row's id. A batch
 * holds rows of one (kind, partition), the subject without its key, up to PER_MESSAGE of them and
 * `maxBytes` of JSON (a larger row goes alone). A batch of one row is published as a plain message.
 */
export const assignBatches = (rows: ReadonlyArray<{ readonly outboxId: string; readonly subject: string; readonly bytes: number }>, maxBytes: number) => {
  const open = new Map<string, { leader: string; count: number; bytes: number }>()
  return rows.map((row) => {
    const lane = row.subject.slice(0, row.subject.lastIndexOf("."))
    // The key, the entry's JSON around it, and a margin for the headers.
    const bytes = Number(row.bytes) + row.subject.length - lane.length + 64
    let batch = open.get(lane)
    if (batch === undefined || batch.count >= PER_MESSAGE || batch.bytes + bytes > maxBytes) {
      batch = { leader: row.outboxId, count: 0, bytes: 0 }
      open.set(lane, batch)
    }
    batch.count++
    batch.bytes += bytes
    return batch.leader
  })
}
