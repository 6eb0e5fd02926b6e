import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { type Duration, Effect } from "effect"
import type { ActorContext, ActorKind } from "../../src/actors/runtime/ActorKind.ts"
import { type LeaseGuard, unguarded } from "../../src/actors/runtime/leaseGuard.ts"

/**
 * Runs one command of an actor kind's behaviour without NATS or the runtime, with a context that
 * records what the behaviour asked for (as @effect/cluster's Entity.makeTestClient does): the
 * rules of a kind are then checked as `(state, command) → (state, writes, timers, sends, work)`.
 * Nothing recorded is carried out: `afterCommit` work and `persist` statements are kept for the
 * test to inspect or run.
 */
export interface Recorded<C> {
  readonly sends: Array<{ readonly kind: string; readonly key: string; readonly command: unknown; readonly msgId: string | undefined }>
  readonly timers: Array<{ readonly command: C; readonly when: { readonly at: Date } | { readonly after: Duration.DurationInput }; readonly id: string | undefined }>
  readonly cancelled: Array<string>
  readonly inserts: Array<{ readonly table: string; readonly row: Readonly<Record<string, unknown>> }>
  readonly updates: Array<{ readonly table: string; readonly row: Readonly<Record<string, unknown>>; readonly where: ReadonlyArray<string> }>
  readonly persisted: Array<Effect.Effect<void, SqlError, SqlClient.SqlClient>>
  readonly notices: Array<{ readonly subject: string; readonly payload: unknown }>
  readonly afterCommit: Array<Effect.Effect<void>>
  readonly replies: Array<{ readonly request: unknown; readonly value: unknown }>
  readonly failures: Array<{ readonly request: unknown; readonly error: unknown }>
  /** Holds the command took, each with the function that hands its continuation back. */
  readonly holds: Array<{ readonly deadline: Duration.DurationInput; readonly continuations: Array<C> }>
}

export interface BehaviourOptions {
  readonly key?: string
  readonly partition?: number
  readonly seq?: number
  readonly attempt?: number
  readonly timerId?: string
  readonly lease?: LeaseGuard
}

export const recordingContext = <C>(options: BehaviourOptions = {}) => {
  const recorded: Recorded<C> = {
    sends: [],
    timers: [],
    cancelled: [],
    inserts: [],
    updates: [],
    persisted: [],
    notices: [],
    afterCommit: [],
    replies: [],
    failures: [],
    holds: []
  }
  let timers = 0
  const context: ActorContext<C> = {
    key: options.key ?? "key",
    partition: options.partition ?? 0,
    seq: options.seq ?? 1,
    attempt: options.attempt ?? 1,
    timerId: options.timerId,
    reply: (request, value) => void recorded.replies.push({ request, value }),
    fail: (request, error) => void recorded.failures.push({ request, error }),
    send: (kind, key, command, sendOptions) => void recorded.sends.push({ kind: kind.name, key, command, msgId: sendOptions?.msgId }),
    schedule: (command, when, id) => {
      recorded.timers.push({ command, when, id })
      return id ?? `t${timers++}`
    },
    cancelTimer: (id) => void recorded.cancelled.push(id),
    persist: (write) => void recorded.persisted.push(write),
    insert: (table, row) => void recorded.inserts.push({ table, row }),
    update: (table, row, where) => void recorded.updates.push({ table, row, where }),
    notify: (subject, payload) => void recorded.notices.push({ subject, payload }),
    afterCommit: (effect) => void recorded.afterCommit.push(effect),
    lease: options.lease ?? unguarded,
    hold: (deadline) => {
      const hold = { deadline, continuations: [] as Array<C> }
      recorded.holds.push(hold)
      return (continuation) => void hold.continuations.push(continuation)
    }
  }
  return { context, recorded }
}

type ErrorOf<K> = K extends ActorKind<any, any, any, any, any, infer E, any> ? E : never

/** Applies `command` to `state` with a recording context: the next state and what was recorded. */
export const applyBehaviour = <K extends ActorKind.Any>(
  kind: K,
  state: ActorKind.State<K>,
  command: ActorKind.Command<K>,
  options: BehaviourOptions = {}
): Effect.Effect<{ readonly state: ActorKind.State<K>; readonly recorded: Recorded<ActorKind.Command<K>> }, ErrorOf<K>, ActorKind.Context<K>> =>
  Effect.suspend(() => {
    const { context, recorded } = recordingContext<ActorKind.Command<K>>(options)
    return Effect.map(kind.behaviour(state, command, context), (next) => ({ state: next, recorded }))
  })
