import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { headers as natsHeaders } from "nats"
import { Nats } from "../../bus/Nats.ts"
import { NotFound } from "../../domain/errors.ts"
import { encodeJson } from "./transport.ts"

const COLUMNS = "poison_id, kind, partition, actor_key, seq, command, command_bytes, error, attempts, parked_at, redriven_at"

const present = ({ commandBytes, ...row }: ParkedRow): ParkedCommand =>
  commandBytes === null ? row : { ...row, command: Buffer.from(commandBytes).toString("utf8") }

/** What a re-drive publishes: the bytes the command travelled as when jsonb could not hold them. */
const payloadOf = (row: ParkedRow) => (row.commandBytes !== null ? new Uint8Array(row.commandBytes) : encodeJson(row.command))

export interface ParkedCommand {
  readonly poisonId: string
  readonly kind: string
  readonly partition: number
  readonly actorKey: string
  readonly seq: string
  /**
   * The command as JSON; for one jsonb could not hold (kept as bytes), the JSON text it
   * travelled as, with its NUL characters and unpaired surrogates escaped.
   */
  readonly command: unknown
  readonly error: string
  readonly attempts: number
  readonly parkedAt: Date
  readonly redrivenAt: Date | null
}

/** A row as stored: the command as jsonb, or as bytes when jsonb could not hold it. */
interface ParkedRow extends ParkedCommand {
  readonly commandBytes: Uint8Array | null
}

/**
 * Commands that failed every try, parked with their payload and error. Re-driving publishes the
 * command again (a new message, processed from the actor's current state) and marks the row.
 */
export class PoisonQueue extends Effect.Service<PoisonQueue>()("herald/actors/PoisonQueue", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const nats = yield* Nats

    const list = (options: { readonly kind?: string; readonly includeRedriven?: boolean; readonly limit?: number } = {}) =>
      sql<ParkedRow>`
        SELECT ${sql.literal(COLUMNS)}
        FROM actor_poison
        WHERE (${options.kind ?? null}::text IS NULL OR kind = ${options.kind ?? null})
          AND (${options.includeRedriven ?? false} OR redriven_at IS NULL)
        ORDER BY parked_at DESC
        LIMIT ${options.limit ?? 100}`.pipe(Effect.map((rows) => rows.map(present)), Effect.orDie, Effect.withSpan("PoisonQueue.list"))

    const redrive = (poisonId: string) =>
      Effect.gen(function*() {
        if (!Schema.is(Schema.UUID)(poisonId)) return yield* new NotFound({ message: `no parked command ${poisonId}` })
        const rows = yield* sql<ParkedRow>`
          SELECT ${sql.literal(COLUMNS)} FROM actor_poison WHERE poison_id = ${poisonId} AND redriven_at IS NULL`.pipe(Effect.orDie)
        const parked = Option.fromNullable(rows[0])
        if (Option.isNone(parked)) return yield* new NotFound({ message: `no parked command ${poisonId} waiting for a re-drive` })
        const p = parked.value
        yield* nats.publish(nats.names.subject(p.kind, p.partition, p.actorKey), payloadOf(p), {
          msgID: `redrive-${p.poisonId}`,
          headers: natsHeaders()
        })
        yield* sql`UPDATE actor_poison SET redriven_at = now() WHERE poison_id = ${poisonId}`.pipe(Effect.orDie)
        return { poison_id: p.poisonId, kind: p.kind, key: p.actorKey }
      }).pipe(Effect.withSpan("PoisonQueue.redrive"))

    return { list, redrive } as const
  })
}) {}
