import { Duration, Effect, Exit } from "effect"
import { encoderOf, type ReplyWire } from "./ActorClient.ts"
import type { ActorContext, ActorKind } from "./ActorKind.ts"
import type { Applied } from "./applied.ts"
import type { StateWrite } from "./committer.ts"
import { partitionOf } from "./partitioning.ts"
import type { PartitionState } from "./partitionState.ts"
import { encodeExit } from "./replies.ts"
import { commandSubject, encodeJson } from "./transport.ts"
import { currentTraceparent, TRACEPARENT, tracedSpan } from "../../observability/Tracing.ts"

/** What a behaviour asked for while one command was applied, kept apart until it succeeds. */
interface Recorded {
  readonly outbox: Array<Effect.Effect<StateWrite["outbox"][number]>>
  readonly timersAdd: Array<Effect.Effect<StateWrite["timersAdd"][number]>>
  readonly timersRemove: Array<string>
  readonly persist: Array<StateWrite["persist"][number]>
  readonly inserts: Array<StateWrite["inserts"][number]>
  readonly targets: Map<string, ActorKind.AnyAddress>
  readonly notices: Array<{ readonly subject: string; readonly payload: unknown }>
  readonly afterwards: Array<Effect.Effect<void>>
}

export type RecordedEffects = ReturnType<typeof recordEffects>

/**
 * The context a behaviour sees; its effects are recorded and applied at commit. `tag` names what
 * this application may create (outbox message ids, timer ids): the command's sequence, with the
 * continuation's number for a continuation.
 */
export const recordEffects = (p: PartitionState, key: string, seq: number, tag: string, attempt: number, timerId: string | undefined) => {
  const { kind, env } = p
  const recorded: Recorded = { outbox: [], timersAdd: [], timersRemove: [], persist: [], inserts: [], targets: new Map(), notices: [], afterwards: [] }
  let counter = 0
  let reply: ReplyWire | undefined
  let hold: Applied["hold"]
  const context: ActorContext<unknown> = {
    key,
    partition: p.partition,
    seq,
    attempt,
    timerId,
    reply: (request, value) => {
      reply = { exit: encodeExit(request, Exit.succeed(value)) }
    },
    fail: (request, error) => {
      reply = { exit: encodeExit(request, Exit.fail(error)) }
    },
    send: (target, targetKey, command, options) => {
      const n = counter++
      recorded.targets.set(target.name, target)
      recorded.outbox.push(
        Effect.map(Effect.all([Effect.orDie(encoderOf(target)(command)), currentTraceparent]), ([payload, traceparent]) => ({
          subject: commandSubject(env.names, target.name, partitionOf(targetKey, env.partitions), targetKey),
          // Deterministic: a command re-applied after a crash sends the same id, which
          // JetStream's duplicate window drops.
          msgId: options?.msgId ?? `${kind.name}:${key}:${tag}:${n}`,
          payload,
          // The trace goes on in the command this one sends (evaluated inside the command's span).
          headers: traceparent === undefined ? null : { [TRACEPARENT]: traceparent }
        }))
      )
    },
    // A chosen id names the timer within its actor: stored ids are prefixed with kind and key.
    schedule: (command, when, id) => {
      const timer = id !== undefined ? `${kind.name}:${key}:${id}` : `${kind.name}:${key}:${tag}:t${counter++}`
      const fireAt = "at" in when ? when.at : new Date(Date.now() + Duration.toMillis(when.after))
      recorded.timersAdd.push(
        Effect.map(Effect.all([Effect.orDie(p.encodeCommand(command)), currentTraceparent]), ([encoded, traceparent]) => ({ timerId: timer, key, fireAt, command: encoded, traceparent }))
      )
      return timer
    },
    cancelTimer: (id) => {
      recorded.timersRemove.push(id.startsWith(`${kind.name}:${key}:`) ? id : `${kind.name}:${key}:${id}`)
    },
    persist: (effect) => {
      recorded.persist.push(effect)
    },
    insert: (table, row) => {
      plainTable(table)
      recorded.inserts.push({ table, row })
    },
    update: (table, row, where) => {
      plainTable(table)
      recorded.inserts.push({ table, row, updateOn: where })
    },
    notify: (subject, payload) => {
      recorded.notices.push({ subject, payload })
    },
    lease: p.lease,
    afterCommit: (effect) => {
      recorded.afterwards.push(effect)
    },
    hold: (deadline) => {
      const id = ++p.nextHoldId
      hold = { id, deadline: Date.now() + Duration.toMillis(deadline) }
      return (command) => {
        if (!p.closed) p.inbox.unsafeOffer({ _tag: "local", key, command, holdId: id })
      }
    }
  }
  return {
    context,
    applyTo: (write: StateWrite) => applyRecorded(p, recorded, write),
    queueNotices: (into: Applied) => queueNotices(p, recorded, into),
    get reply() {
      return reply
    },
    get hold() {
      return hold
    }
  }
}

// Table names are spliced into SQL: a behaviour's mistake must not become an injection.
const plainTable = (table: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`table name ${JSON.stringify(table)} is not a plain identifier`)
}

/** Adds what a successful application recorded to the actor's pending write. */
const applyRecorded = (p: PartitionState, recorded: Recorded, write: StateWrite) =>
  Effect.gen(function*() {
    // Work the command started after its commit, and its statements in the commit, continue its
    // trace (they run later, in other fibers, outside the command's span).
    const span = yield* tracedSpan
    if (span !== undefined) {
      recorded.afterwards.splice(0, recorded.afterwards.length, ...recorded.afterwards.map((effect) => Effect.withParentSpan(effect, span)))
      recorded.persist.splice(0, recorded.persist.length, ...recorded.persist.map((effect) => Effect.withParentSpan(effect, span)))
    }
    for (const target of recorded.targets.values()) yield* Effect.orDie(p.env.ensureKind(target))
    for (const o of recorded.outbox) write.outbox.push(yield* o)
    // Timer operations of the commands of one write are applied in order, the last one on an
    // id winning: a timer scheduled then cancelled (or the reverse) in one batch must not
    // reach the database twice, nor twice in one INSERT.
    const dropAdded = (id: string) => {
      const at = write.timersAdd.findIndex((t) => t.timerId === id)
      if (at >= 0) write.timersAdd.splice(at, 1)
    }
    for (const id of recorded.timersRemove) {
      dropAdded(id)
      if (!write.timersRemove.includes(id)) write.timersRemove.push(id)
    }
    for (const t of recorded.timersAdd) {
      const added = yield* t
      dropAdded(added.timerId)
      write.timersAdd.push(added)
    }
    write.persist.push(...recorded.persist)
    write.inserts.push(...recorded.inserts)
  })

/** Notices go out after the commit, like replies; so does work a behaviour started with afterCommit. */
const queueNotices = (p: PartitionState, recorded: Recorded, into: Applied) => {
  for (const notice of recorded.notices) into.replies.push(() => Effect.sync(() => p.env.bus.nc.publish(notice.subject, encodeJson(notice.payload))))
  for (const effect of recorded.afterwards) into.replies.push(() => effect)
}
