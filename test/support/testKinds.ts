import { SqlClient } from "@effect/sql"
import { Effect, Layer, Metric, MetricBoundaries, Schema } from "effect"
import * as ActorKind from "../../src/actors/runtime/ActorKind.ts"
import { registerKind } from "../../src/actors/runtime/ActorRuntime.ts"

// Commands of the test counter. `n` is the sender's own sequence number: the actor checks that
// each sender's commands arrive in order and exactly once.
export class Add extends Schema.TaggedClass<Add>()("Add", {
  sender: Schema.String,
  n: Schema.Number,
  amount: Schema.Number
}) {}

export class Explode extends Schema.TaggedClass<Explode>()("Explode", {
  mode: Schema.Literal("fail", "die")
}) {}

/** Applies, but its row is one the database refuses (no such table): its commit fails. */
export class Refused extends Schema.TaggedClass<Refused>()("Refused", {}) {}

/**
 * Keeps `text` in the state and, once committed, starts a side effect (counted per key in memory
 * here): a text the database cannot store (a NUL) makes the state write fail.
 */
export class Store extends Schema.TaggedClass<Store>()("Store", { text: Schema.String }) {}

/** Applications of Store, and side effects started after their commit, per key, in this process. */
export const storeTries = new Map<string, number>()
export const storeEffects = new Map<string, number>()

/** Fails its first `times` tries, then succeeds. */
export class Flaky extends Schema.TaggedClass<Flaky>()("Flaky", { times: Schema.Number }) {}

export class Remind extends Schema.TaggedClass<Remind>()("Remind", {
  tag: Schema.String,
  afterMs: Schema.Number
}) {}

export class Fired extends Schema.TaggedClass<Fired>()("Fired", {
  tag: Schema.String,
  dueAt: Schema.Number
}) {}

export class Forward extends Schema.TaggedClass<Forward>()("Forward", {
  to: Schema.String,
  amount: Schema.Number
}) {}

export class Total extends Schema.TaggedRequest<Total>()("Total", {
  failure: Schema.Never,
  success: Schema.Struct({ total: Schema.Number, count: Schema.Number }),
  payload: {}
}) {}

export class Withdraw extends Schema.TaggedRequest<Withdraw>()("Withdraw", {
  failure: Schema.Struct({ reason: Schema.Literal("insufficient") }),
  success: Schema.Struct({ total: Schema.Number }),
  payload: { amount: Schema.Number }
}) {}

/** A request whose handling always dies: its ask ends in CommandParked. */
export class Detonate extends Schema.TaggedRequest<Detonate>()("Detonate", {
  failure: Schema.Never,
  success: Schema.Void,
  payload: {}
}) {}

/**
 * Holds itself open (ActorContext.hold) with a deadline of `deadlineMs`; its continuation adds
 * `amount` after `resumeAfterMs` on each try listed (tries are counted per key in memory here,
 * since a held command writes nothing), and never on the others.
 */
export class HoldFor extends Schema.TaggedClass<HoldFor>()("HoldFor", {
  amount: Schema.Number,
  deadlineMs: Schema.Number,
  resumeAfterMs: Schema.Array(Schema.NullOr(Schema.Number)),
  /** Tries of the continuation that fail before one succeeds. */
  continuationFails: Schema.optionalWith(Schema.Number, { default: () => 0 })
}) {}

/** The continuation of a HoldFor. */
export class Resumed extends Schema.TaggedClass<Resumed>()("Resumed", { amount: Schema.Number, fails: Schema.Number }) {}

/** Reads the actor's committed total from the database: what a behaviour reading its own rows sees. */
export class Peek extends Schema.TaggedClass<Peek>()("Peek", {}) {}

/** What each key's Peek read (null: no row yet), in this process. */
export const peeks = new Map<string, number | null>()

/** Applications of HoldFor per key, in this process. */
export const holdTries = new Map<string, number>()

export const CounterCommand = Schema.Union(Add, Explode, Refused, Store, Flaky, Remind, Fired, Forward, Total, Withdraw, Detonate, HoldFor, Resumed, Peek)

export const CounterState = Schema.Struct({
  total: Schema.Number,
  count: Schema.Number,
  lastBySender: Schema.Record({ key: Schema.String, value: Schema.Number }),
  violations: Schema.Array(Schema.String),
  flakyTries: Schema.Number,
  fired: Schema.Array(Schema.Struct({ tag: Schema.String, dueAt: Schema.Number, at: Schema.Number, node: Schema.String })),
  notes: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
})
type CounterState = typeof CounterState.Type

class Boom extends Schema.TaggedError<Boom>()("Boom", { message: Schema.String }) {}

const node = process.env.HERALD_NODE_ID ?? "in-process"

export const Counter = ActorKind.make("counter", {
  command: CounterCommand,
  state: CounterState,
  initial: (): CounterState => ({ total: 0, count: 0, lastBySender: {}, violations: [], flakyTries: 0, fired: [], notes: [] }),
  behaviour: (state, command, ctx) => {
    switch (command._tag) {
      case "Add": {
        const last = state.lastBySender[command.sender] ?? 0
        const violations = command.n === last + 1 ? state.violations : [...state.violations, `${command.sender}: ${last} then ${command.n}`].slice(-20)
        return Effect.succeed({
          ...state,
          total: state.total + command.amount,
          count: state.count + 1,
          lastBySender: { ...state.lastBySender, [command.sender]: command.n },
          violations
        })
      }
      case "Explode":
        return command.mode === "fail" ? Effect.fail(new Boom({ message: "always fails" })) : Effect.die(new Error("always dies"))
      case "Refused":
        ctx.insert("no_such_table", { x: 1 })
        return Effect.succeed(state)
      case "Store": {
        storeTries.set(ctx.key, (storeTries.get(ctx.key) ?? 0) + 1)
        ctx.afterCommit(Effect.sync(() => storeEffects.set(ctx.key, (storeEffects.get(ctx.key) ?? 0) + 1)))
        return Effect.succeed({ ...state, notes: [...state.notes, command.text] })
      }
      case "Flaky":
        return ctx.attempt <= command.times
          ? Effect.fail(new Boom({ message: `try ${ctx.attempt}` }))
          : Effect.succeed({ ...state, flakyTries: ctx.attempt })
      case "Remind":
        ctx.schedule(new Fired({ tag: command.tag, dueAt: Date.now() + command.afterMs }), { after: command.afterMs })
        return Effect.succeed(state)
      case "Fired":
        return Effect.succeed({ ...state, fired: [...state.fired, { tag: command.tag, dueAt: command.dueAt, at: Date.now(), node }] })
      case "Forward":
        ctx.send(Counter, command.to, new Add({ sender: `fwd-${ctx.key}`, n: state.count + 1, amount: command.amount }))
        return Effect.succeed({ ...state, count: state.count + 1 })
      case "Total":
        ctx.reply(command, { total: state.total, count: state.count })
        return Effect.succeed(state)
      case "Detonate":
        return Effect.die(new Error("detonated"))
      case "HoldFor": {
        const tries = (holdTries.get(ctx.key) ?? 0) + 1
        holdTries.set(ctx.key, tries)
        const resume = ctx.hold(command.deadlineMs)
        const after = command.resumeAfterMs[Math.min(tries, command.resumeAfterMs.length) - 1]
        if (after !== null && after !== undefined) setTimeout(() => resume(new Resumed({ amount: command.amount, fails: command.continuationFails })), after)
        return Effect.succeed({ ...state, count: state.count + 1 })
      }
      case "Resumed":
        return ctx.attempt <= command.fails
          ? Effect.fail(new Boom({ message: `continuation try ${ctx.attempt}` }))
          : Effect.succeed({ ...state, total: state.total + command.amount })
      case "Peek":
        return Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const rows = yield* Effect.orDie(sql<{ total: number }>`SELECT (state->>'total')::int AS total FROM actor_counter WHERE actor_key = ${ctx.key}`)
          peeks.set(ctx.key, rows[0]?.total ?? null)
          return state
        })
      case "Withdraw":
        if (command.amount > state.total) {
          ctx.fail(command, { reason: "insufficient" as const })
          return Effect.succeed(state)
        }
        ctx.reply(command, { total: state.total - command.amount })
        return Effect.succeed({ ...state, total: state.total - command.amount })
    }
  }
})

export const TestKinds = Layer.mergeAll(registerKind(Counter, { maxAttempts: 3, passivateAfter: "1 second" }), Layer.suspend(() => registerKind(BenchCounter)))

// --- the benchmark's counter: the smallest durable actor, timing each command end to end ----

export class Incr extends Schema.TaggedClass<Incr>()("Incr", { sentAt: Schema.Number }) {}

const benchLatency = Metric.histogram(
  "bench_command_latency_seconds",
  MetricBoundaries.fromIterable([0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10]),
  "From publish to application of a benchmark command"
)

export const BenchCounter = ActorKind.make("bench", {
  command: Incr,
  state: Schema.Struct({ count: Schema.Number }),
  initial: () => ({ count: 0 }),
  behaviour: (state, command) =>
    Effect.as(Metric.update(benchLatency, (Date.now() - command.sentAt) / 1000), { count: state.count + 1 })
})
