import type { Effect, Tracer } from "effect"
import { emptyWrite, type StateWrite } from "./committer.ts"
import type { StreamCommand } from "./streamCommand.ts"

/** An actor in memory: its state as last committed (or being committed). */
export interface Resident {
  state: unknown
  seq: number
  idleSince: number
  /** Its commands are being applied, committed or retried: not to be passivated. */
  busy: boolean
}

/**
 * What the partition applies: a command from the stream, or the continuation of a held command,
 * handed over in memory (ActorContext.hold) and valid only for the hold it was made for.
 */
export type Entry =
  | { readonly _tag: "stream"; readonly key: string; readonly message: StreamCommand }
  | { readonly _tag: "local"; readonly key: string; readonly command: unknown; readonly holdId: number }

export const streamEntry = (message: StreamCommand): Entry => ({ _tag: "stream", key: message.key, message })

/** What one actor's commands applied so far, to be committed together. */
export interface Applied {
  readonly key: string
  state: unknown
  applied: number
  readonly write: StateWrite
  readonly acks: Array<StreamCommand>
  readonly replies: Array<() => Effect.Effect<void>>
  /** Set while the last command applied holds: nothing of this is written until its continuation. */
  hold: { readonly id: number; readonly deadline: number } | undefined
  /** Continuations applied on top of the last stream command, naming their effects apart. */
  continuations: number
  /** Spans of traced commands applied here, ended (with a child for the commit) once they are committed. */
  readonly traced: Array<Tracer.Span>
}

export const startApplied = (key: string, from: Resident): Applied => ({
  key,
  state: from.state,
  applied: from.seq,
  write: emptyWrite(key, from.seq),
  acks: [],
  replies: [],
  hold: undefined,
  continuations: 0,
  traced: []
})

/**
 * A copy of what an actor holds, for its continuation to be applied on: the original stays as
 * it was until the continuation's outcome is written, in case the continuation fails or its
 * write is refused.
 */
export const copyOf = (held: Applied): Applied => ({
  ...held,
  write: {
    ...held.write,
    outbox: [...held.write.outbox],
    timersAdd: [...held.write.timersAdd],
    timersRemove: [...held.write.timersRemove],
    poison: [...held.write.poison],
    inserts: [...held.write.inserts],
    persist: [...held.write.persist]
  },
  acks: [...held.acks],
  replies: [...held.replies],
  traced: [...held.traced]
})
