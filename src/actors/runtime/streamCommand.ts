import { Either } from "effect"
import type { JsMsg } from "nats"
import { decodeJson, encodeJson, Header, keyOfSubject } from "./transport.ts"

/**
 * Positions: every command a partition receives has one, increasing in stream order, which is
 * what an actor's `last_seq` stores (a command at or below it was applied). A JetStream message
 * carries one command or, packed by the outbox relay, a batch of up to POSITIONS_PER_MESSAGE:
 * command `i` of the message at stream sequence `s` is at `s * POSITIONS_PER_MESSAGE + i` (a plain
 * message's command at `s * POSITIONS_PER_MESSAGE`). Migration 0021 scaled the positions stored
 * before. 2^53 / 2^16: stream sequences up to 1.4e11 stay exact.
 */
export const POSITIONS_PER_MESSAGE = 65_536

/** One command as the partition applies it: a plain message, or one entry of a batch message. */
export interface StreamCommand {
  readonly key: string
  /** Where it stands in the partition's stream: see POSITIONS_PER_MESSAGE. */
  readonly seq: number
  /** The command's bytes, as it travelled (a batch entry: its JSON). */
  readonly data: Uint8Array
  /** The command's JSON, or why its bytes are not JSON. */
  readonly json: () => Either.Either<unknown, string>
  readonly header: (name: string) => string | undefined
  /** Done: the message is acknowledged once every command it carries is (a repeat is ignored). */
  readonly ack: () => void
  /** Still in progress: keeps its message from redelivery. */
  readonly working: () => void
}

/** An entry of a batch message's body (JSON array, in order). */
export interface BatchEntry {
  readonly key: string
  readonly payload: unknown
  readonly headers: Record<string, string> | null
}

export const encodeBatch = (entries: ReadonlyArray<BatchEntry>): Uint8Array => encodeJson(entries)

const jsonOfBytes = (data: Uint8Array): Either.Either<unknown, string> => {
  try {
    return Either.right(decodeJson(data))
  } catch (error) {
    return Either.left(`not JSON (${(error as Error).message})`)
  }
}

const plain = (message: JsMsg): StreamCommand => ({
  key: keyOfSubject(message.subject),
  seq: message.seq * POSITIONS_PER_MESSAGE,
  data: message.data,
  json: () => jsonOfBytes(message.data),
  header: (name) => message.headers?.get(name) || undefined,
  ack: () => message.ack(),
  working: () => message.working()
})

/** A batch message's body, or undefined when it is not a well-formed one. */
const entriesOf = (message: JsMsg, belongs: (key: string) => boolean): ReadonlyArray<BatchEntry> | undefined => {
  const body = jsonOfBytes(message.data)
  if (body._tag === "Left" || !Array.isArray(body.right) || body.right.length === 0 || body.right.length > POSITIONS_PER_MESSAGE) return undefined
  for (const e of body.right) {
    if (typeof e !== "object" || e === null || typeof (e as BatchEntry).key !== "string" || !belongs((e as BatchEntry).key)) return undefined
  }
  return body.right as ReadonlyArray<BatchEntry>
}

/**
 * The commands a message carries, in order. A batch message (header `Herald-Batch`) is
 * acknowledged once each of its commands has been (applied and committed, skipped as applied
 * before, or parked); until then a redelivery brings all of them again, and the positions of
 * those already applied skip them. A batch whose body is not well-formed is one command, which
 * cannot be decoded and is parked; so is one naming an actor of another partition (`belongs`).
 */
export const commandsOf = (message: JsMsg, belongs: (key: string) => boolean): ReadonlyArray<StreamCommand> => {
  if (!message.headers?.get(Header.batch)) return [plain(message)]
  const entries = entriesOf(message, belongs)
  if (entries === undefined) return [plain(message)]
  let remaining = entries.length
  const base = message.seq * POSITIONS_PER_MESSAGE
  return entries.map((entry, i) => {
    let acked = false
    let data: Uint8Array | undefined
    return {
      key: entry.key,
      seq: base + i,
      get data() {
        return (data ??= encodeJson(entry.payload))
      },
      json: () => Either.right(entry.payload),
      header: (name) => entry.headers?.[name] || undefined,
      ack: () => {
        if (acked) return
        acked = true
        if (--remaining === 0) message.ack()
      },
      working: () => message.working()
    } satisfies StreamCommand
  })
}
