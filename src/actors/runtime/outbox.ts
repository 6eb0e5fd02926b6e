import { SqlClient } from "@effect/sql"
import { Duration, Effect, Queue, Schedule } from "effect"
import { headers as natsHeaders } from "nats"
import { randomUUID } from "node:crypto"
import { Nats } from "../../bus/Nats.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { Storage } from "../../storage/Migrations.ts"
import { ActorClient, encoderOf } from "./ActorClient.ts"
import type { ActorKind } from "./ActorKind.ts"
import { partitionOf } from "./partitioning.ts"
import { commandSubject, encodeJson } from "./transport.ts"

/** Rows per relay round: at 500 the relay fell seconds behind a burst of fanned-out events. */
const BATCH = 2_000
const IDLE_POLL = Duration.millis(250)
const KEEP_PUBLISHED = "1 hour"

/**
 * The transactional outbox (ACTORS.md). `enqueue` writes a command for an actor as a row, inside
 * the caller's transaction, next to the domain rows it belongs with; the relay publishes pending
 * rows to JetStream with the row's message id (so a re-publish after a crash is deduplicated) and
 * marks them. A transaction-scoped advisory lock lets one relay run at a time across nodes, which
 * keeps rows published in commit order.
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
        yield* sql`
          INSERT INTO actor_outbox (subject, msg_id, payload)
          VALUES (${subject}, ${options.msgId ?? randomUUID()}, ${JSON.stringify(payload)}::jsonb)`
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
        yield* sql`
          INSERT INTO actor_outbox (subject, msg_id, payload)
          SELECT subject, msg_id, payload::jsonb
          FROM unnest(${rows.map((r) => r.subject)}::text[], ${rows.map((r) => r.msgId)}::text[], ${rows.map((r) => r.payload)}::text[])
            AS t(subject, msg_id, payload)`
      })

    const relayOnce = Effect.gen(function*() {
      const { js } = yield* nats.connected
      return yield* Effect.gen(function*() {
        const [lock] = yield* sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtext('herald.actor_outbox')) AS locked`
        if (!lock?.locked) return 0
        const rows = yield* sql<{ outboxId: string; subject: string; msgId: string; payload: unknown; headers: Record<string, string> | null }>`
          SELECT outbox_id, subject, msg_id, payload, headers FROM actor_outbox
          WHERE published_at IS NULL ORDER BY outbox_id LIMIT ${BATCH}`
        if (rows.length === 0) return 0
        yield* Effect.tryPromise(() =>
          Promise.all(
            rows.map((row) => {
              const h = natsHeaders()
              for (const [k, v] of Object.entries(row.headers ?? {})) h.set(k, v)
              return js.publish(row.subject, encodeJson(row.payload), { msgID: row.msgId, headers: h })
            })
          )
        )
        yield* sql`UPDATE actor_outbox SET published_at = now() WHERE outbox_id = ANY(${rows.map((r) => r.outboxId)}::bigint[])`
        return rows.length
      }).pipe(sql.withTransaction)
    })

    yield* Effect.gen(function*() {
      yield* storage.awaitReady
      for (;;) {
        const published = yield* relayOnce.pipe(
          Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("outbox relay failed; retrying", cause), -1))
        )
        if (published === BATCH) continue
        yield* Queue.take(wake).pipe(Effect.timeoutOption(published < 0 ? Duration.seconds(1) : IDLE_POLL))
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
