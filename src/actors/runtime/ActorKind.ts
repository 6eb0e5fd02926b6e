import type { LeaseGuard } from "./leaseGuard.ts"
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Duration, Effect, Schema } from "effect"

/**
 * What a behaviour may do besides returning its next state. Nothing here happens at once: every
 * call is recorded and carried out only when the command's state change commits, in the same
 * transaction (outbox rows, timer rows, extra writes) or right after it (replies). A command that
 * fails and is retried therefore leaves no trace of its failed attempts.
 */
export interface ActorContext<Command> {
  readonly key: string
  readonly partition: number
  /**
   * Position of this command in its partition's stream: increases with every command of the
   * partition (its message's stream sequence × 65536, plus its index in a batch message).
   */
  readonly seq: number
  /** 1 for the first try; more when earlier tries failed. */
  readonly attempt: number
  /** The timer that fired this command, when a timer did. */
  readonly timerId: string | undefined
  /** Answers an `ask`: the value must be what the request class declares as its success. */
  readonly reply: <R extends Command & Schema.TaggedRequest.All>(request: R, value: Schema.WithResult.Success<R>) => void
  /** Answers an `ask` with the request's declared failure; the command itself counts as done. */
  readonly fail: <R extends Command & Schema.TaggedRequest.All>(request: R, error: Schema.WithResult.Failure<R>) => void
  /** Sends a command to another actor (through the outbox: delivered once the commit is durable). */
  readonly send: <K extends ActorKind.AnyAddress>(kind: K, key: string, command: ActorKind.Command<K>, options?: { readonly msgId?: string }) => void
  /**
   * Schedules a command to this actor. The timer survives crashes: it is a row written with the
   * state, fired by whichever node owns the partition then. Returns the timer id. A chosen
   * `timerId` is unique within this actor (other actors may use the same one); scheduling it
   * again replaces the timer.
   */
  readonly schedule: (command: Command, when: { readonly at: Date } | { readonly after: Duration.DurationInput }, timerId?: string) => string
  readonly cancelTimer: (timerId: string) => void
  /** A write of the actor's own tables, run in the transaction that commits this command. */
  readonly persist: (write: Effect.Effect<void, SqlError, SqlClient.SqlClient>) => void
  /**
   * A row for one of the actor's own tables, inserted in the transaction that commits this
   * command. Rows of one table (and columns) from every command of a commit share one INSERT,
   * which `persist` statements cannot; a row that conflicts with a unique key is skipped, so a
   * command applied again after a crash inserts nothing twice. Keys are column names.
   */
  readonly insert: (table: string, row: Readonly<Record<string, unknown>>) => void
  /**
   * An update of one of the actor's own tables, in the transaction that commits this command: the
   * row matching `where` (its key columns, which `row` carries) gets the row's other columns.
   * Updates of one table and columns from every command of a commit share one statement; of
   * several for one row, the last wins. Values are given as JSON would carry them.
   */
  readonly update: (table: string, row: Readonly<Record<string, unknown>>, where: ReadonlyArray<string>) => void
  /**
   * A core NATS message published once this command's changes are committed (lost if the node
   * dies first): for answering a waiting caller by its own inbox, when the answer comes from a
   * later command than the one it asked with.
   */
  readonly notify: (subject: string, payload: unknown) => void
  /**
   * Work to start once this command's changes are committed (not at all if they never are), for
   * side effects that must follow the decision to make them: a gateway send is made only after
   * the message it sends is recorded. Lost if the node dies first, so what it starts must be
   * found again from the committed state (a sweep). Must not fail and should return at once.
   */
  readonly afterCommit: (effect: Effect.Effect<void>) => void
  /**
   * The partition's lease, for work started outside the commit (afterCommit, or during a hold):
   * checked just before the work leaves the node (`lease.current`), so a node that lost the
   * partition while paused or cut off starts nothing for it (docs/actors.md).
   */
  readonly lease: LeaseGuard
  /**
   * Holds this command open until its continuation: nothing this command changed is written and
   * the command is not acknowledged; the actor's state moves on in memory only, and its later
   * commands wait. The returned function hands the continuation to the actor in memory (no
   * stream, no commit of its own), typically from work the behaviour started; once it has been
   * applied, the held command and the continuation are committed together. For work whose outcome
   * matters only once it is known (an HTTP attempt): it costs one commit instead of two and no
   * timer. If the node dies, or the continuation does not come by `deadline`, the held command is
   * applied again from the last committed state (so the work is done again: at least once). A
   * continuation for a hold that has ended is dropped.
   */
  readonly hold: (deadline: Duration.DurationInput) => (continuation: Command) => void
}

export interface ActorKindOptions<C, CI, S, SI, E, R> {
  /** Commands this kind accepts, encoded as JSON on the wire. */
  readonly command: Schema.Schema<C, CI>
  /** The persisted state, stored as JSON in the kind's table. */
  readonly state: Schema.Schema<S, SI>
  /** State of an actor that never processed a command. */
  readonly initial: (key: string) => S
  /**
   * Applies one command. A failure (or defect) is retried with backoff from the last committed
   * state; after `maxAttempts` tries the command is parked in the poison table and skipped.
   */
  readonly behaviour: (state: S, command: C, context: ActorContext<C>) => Effect.Effect<S, E, R>
  /** Tries before parking; defaults to HERALD_ACTOR_MAX_ATTEMPTS. */
  readonly maxAttempts?: number
  /** An actor idle this long stops and frees its memory; the next command reloads it. */
  readonly passivateAfter?: Duration.DurationInput
  /** Postgres table of the state; `actor_<name>` by default. */
  readonly table?: string
  /**
   * Requests answered from memory by the partition's owner over core NATS request-reply, never
   * through the stream: for hot paths that cannot pay a JetStream round trip per call (rate-limit
   * takes). Ownership is the same as for commands (one owner per partition, fenced by its lease);
   * the memory is per owned partition and is lost when the partition moves.
   */
  readonly ephemeral?: EphemeralServer
}

export interface EphemeralServer {
  /** One handler per owned partition, made when the partition is acquired, dropped with it. */
  readonly make: () => (key: string, request: unknown) => unknown
}

/**
 * One handler per command tag: each applies its command as `behaviour` does. A kind declared with
 * handlers reads as a table of its rules, and a test finds the one it checks by the tag.
 */
export type Handlers<C extends { readonly _tag: string }, S, E, R> = {
  readonly [T in C["_tag"]]: (state: S, command: Extract<C, { readonly _tag: T }>, context: ActorContext<C>) => Effect.Effect<S, E, R>
}

/** `ActorKindOptions` with `handlers` in place of one `behaviour`. */
export interface ActorKindHandlersOptions<C extends { readonly _tag: string }, CI, S, SI, H> extends Omit<ActorKindOptions<C, CI, S, SI, never, never>, "behaviour"> {
  readonly handlers: H
}

type HandlerEffect<H> = H[keyof H] extends infer F ? F extends (...args: ReadonlyArray<any>) => infer Eff ? Eff : never : never
/** The failures any of the handlers may end with. */
export type HandlersError<H> = HandlerEffect<H> extends Effect.Effect<any, infer E, any> ? E : never
/** What any of the handlers needs. */
export type HandlersContext<H> = HandlerEffect<H> extends Effect.Effect<any, any, infer R> ? R : never

export interface ActorKind<Name extends string, C, CI, S, SI, E, R> extends ActorKindOptions<C, CI, S, SI, E, R> {
  readonly name: Name
  readonly table: string
}

/**
 * What sending to a kind takes: its name (the subjects, the stream) and the schema its commands
 * travel in. Every kind is one. Two kinds that send to each other name each other by address, so
 * neither imports the other's behaviour (nor what that behaviour imports).
 */
export interface ActorAddress<Name extends string, C, CI> {
  readonly name: Name
  readonly command: Schema.Schema<C, CI>
}

export declare namespace ActorKind {
  export type Any = ActorKind<string, any, any, any, any, any, any>
  export type AnyAddress = ActorAddress<string, any, any>
  export type Command<K> = K extends ActorKind<any, infer C, any, any, any, any, any> ? C
    : K extends ActorAddress<any, infer C, any> ? C
    : never
  export type State<K> = K extends ActorKind<any, any, any, infer S, any, any, any> ? S : never
  export type Context<K> = K extends ActorKind<any, any, any, any, any, any, infer R> ? R : never
}

const NAME = /^[a-z][a-z0-9_]{0,30}$/

/**
 * Declares an actor kind. The name becomes a subject token, part of the stream and consumer names
 * and of the table name, so it is lower-case letters, digits and '_'. Its rules come as one
 * `handlers` entry per command tag (the runtime calls the one of the command's `_tag`), or as one
 * `behaviour` for every command.
 */
export function make<const Name extends string, C extends { readonly _tag: string }, CI, S, SI, H extends Handlers<C, S, any, any>>(
  name: Name,
  options: ActorKindHandlersOptions<C, CI, S, SI, H>
): ActorKind<Name, C, CI, S, SI, HandlersError<H>, HandlersContext<H>> & { readonly handlers: H }
export function make<const Name extends string, C, CI, S, SI, E = never, R = never>(
  name: Name,
  options: ActorKindOptions<C, CI, S, SI, E, R>
): ActorKind<Name, C, CI, S, SI, E, R>
export function make<const Name extends string, C, CI, S, SI, E, R>(
  name: Name,
  options:
    | ActorKindOptions<C, CI, S, SI, E, R>
    | Omit<ActorKindOptions<C, CI, S, SI, E, R>, "behaviour"> & { readonly handlers: object }
): ActorKind<Name, C, CI, S, SI, E, R> {
  if (!NAME.test(name)) throw new Error(`actor kind name ${JSON.stringify(name)} must match ${NAME}`)
  const table = options.table ?? `actor_${name}`
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(table)) throw new Error(`actor table name ${JSON.stringify(table)} is not a plain identifier`)
  if ("behaviour" in options) return { ...options, name, table }
  // Indexed by the command's own tag, so the handler found takes exactly that command.
  const byTag: Record<string, (state: S, command: C, context: ActorContext<C>) => Effect.Effect<S, E, R>> = options.handlers as never
  return {
    ...options,
    name,
    table,
    behaviour: (state, command, context) => byTag[(command as { readonly _tag: string })._tag]!(state, command, context)
  }
}

/**
 * The address of kind `name` for commands of `command` (some of the kind's commands, or all): the
 * kind itself must be declared with that name and accept them.
 */
export const address = <const Name extends string, C, CI>(name: Name, command: Schema.Schema<C, CI>): ActorAddress<Name, C, CI> => {
  if (!NAME.test(name)) throw new Error(`actor kind name ${JSON.stringify(name)} must match ${NAME}`)
  return { name, command }
}
