import { type Cause, Effect, Either, Exit, Metric, Option } from "effect"
import { parentFrom, TRACEPARENT } from "../../observability/Tracing.ts"
import type { Applied, Entry } from "./applied.ts"
import { recordEffects, type RecordedEffects } from "./behaviourContext.ts"
import type { PartitionState } from "./partitionState.ts"
import { publishReply } from "./replies.ts"
import type { StreamCommand } from "./streamCommand.ts"
import { Header } from "./transport.ts"

/** What applying one entry came to: the behaviour's failure, or undefined once it is settled. */
type Applying = Effect.Effect<Cause.Cause<unknown> | undefined, never, any>

/**
 * Applies one command on top of `into`. Commands applied before, fires of cancelled timers and
 * undecodable commands (parked at once) are settled here; a failing behaviour returns its cause
 * and leaves `into` as it was. Needs the kind's services (`any`: a kind of any type), provided
 * once per fiber.
 */
export const applyOne = (p: PartitionState, into: Applied, entry: Entry, attempt: number): Applying =>
  entry._tag === "local" ? applyContinuation(p, into, entry, attempt) : applyStreamed(p, into, entry.message, attempt)

/** Runs the behaviour on top of `into`; on success `into` takes its state and whether it holds. */
const runBehaviour = (p: PartitionState, into: Applied, command: unknown, effects: RecordedEffects) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(p.registered.kind.behaviour(into.state, command, effects.context))
    if (Exit.isFailure(exit)) return exit.cause
    into.state = exit.value
    into.write.state = exit.value
    into.hold = effects.hold
    return undefined
  })

const applyStreamed = (p: PartitionState, into: Applied, message: StreamCommand, attempt: number): Applying =>
  Effect.gen(function*() {
    const { key } = into
    const seq = message.seq
    if (seq <= into.applied) {
      into.acks.push(message)
      return undefined
    }
    const timerId = message.header(Header.timer)
    if (timerId !== undefined && !p.timers.has(timerId)) {
      // The timer was cancelled or already handled: a fire is a no-op.
      into.acks.push(message)
      return undefined
    }
    const replyTo = message.header(Header.replyTo)
    const raw = message.json()
    const decoded = Either.flatMap(raw, (json) => Either.mapLeft(p.decodeCommand(json), (error) => error.message))
    if (decoded._tag === "Left") return yield* parkUndecodable(p, into, message, Either.getOrUndefined(raw), decoded.left, replyTo)
    const effects = recordEffects(p, key, seq, `${seq}`, attempt, timerId)
    // A command carrying a trace is applied in a span of its own (OpenTelemetry's "process"),
    // ended once it is committed; what it records (commands it sends, work after its commit)
    // continues that trace.
    const traceparent = message.header(TRACEPARENT)
    const span = traceparent === undefined ? undefined : yield* processSpan(p, key, message, traceparent)
    const traced = <A, E, R>(effect: Effect.Effect<A, E, R>) => (span === undefined ? effect : Effect.withParentSpan(effect, span))
    const failure = yield* traced(runBehaviour(p, into, decoded.right, effects))
    if (failure !== undefined) {
      span?.end(BigInt(Date.now()) * 1_000_000n, Exit.failCause(failure))
      return failure
    }
    into.write.lastSeq = into.applied = seq
    into.continuations = 0
    yield* traced(effects.applyTo(into.write))
    if (span !== undefined) into.traced.push(span)
    if (timerId !== undefined) {
      into.write.timersRemove.push(timerId)
      const due = p.timers.get(timerId)
      if (due) yield* Metric.update(p.metrics.lateness, Math.max(0, Date.now() - due.fireAt.getTime()) / 1000)
    }
    into.acks.push(message)
    if (replyTo && effects.reply) {
      const answer = effects.reply
      into.replies.push(() => publishReply(p.env.bus, replyTo, answer))
    }
    effects.queueNotices(into)
    return undefined
  })

const processSpan = (p: PartitionState, key: string, message: StreamCommand, traceparent: string) =>
  Effect.makeSpan(`process ${p.kind.name}`, {
    kind: "consumer",
    parent: Option.getOrUndefined(parentFrom(traceparent)),
    attributes: {
      "messaging.system": "nats",
      "messaging.operation.type": "process",
      "messaging.destination.name": p.env.names.stream(p.kind.name),
      "messaging.destination.partition.id": String(p.partition),
      "herald.actor.kind": p.kind.name,
      "herald.actor.key": key,
      "herald.command.position": message.seq
    }
  })

/** A command no try can apply: parked at once, its sequence counted as applied. */
const parkUndecodable = (p: PartitionState, into: Applied, message: StreamCommand, json: unknown, why: string, replyTo: string | undefined) =>
  Effect.gen(function*() {
    const seq = message.seq
    into.write.poison.push({ key: into.key, seq, command: json, raw: message.data, error: `undecodable command: ${why}`, attempts: 0 })
    into.write.lastSeq = into.applied = seq
    into.acks.push(message)
    if (replyTo) into.replies.push(() => publishReply(p.env.bus, replyTo, { parked: "undecodable command" }))
    yield* Metric.increment(p.metrics.parked)
    return undefined
  })

/** A continuation: applied like a command, but it has no sequence of its own and nothing to acknowledge. */
const applyContinuation = (p: PartitionState, into: Applied, entry: Extract<Entry, { _tag: "local" }>, attempt: number) =>
  Effect.gen(function*() {
    const seq = into.applied
    const effects = recordEffects(p, into.key, seq, `${seq}.c${into.continuations + 1}`, attempt, undefined)
    // It finishes the held command's work: in that command's trace (a webhook's retry timer, say).
    const span = into.traced[into.traced.length - 1]
    const traced = <A, E, R>(effect: Effect.Effect<A, E, R>) => (span === undefined ? effect : Effect.withParentSpan(effect, span))
    const failure = yield* traced(runBehaviour(p, into, entry.command, effects))
    if (failure !== undefined) return failure
    into.continuations++
    yield* traced(effects.applyTo(into.write))
    effects.queueNotices(into)
    return undefined
  })
