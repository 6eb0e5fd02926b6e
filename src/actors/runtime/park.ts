import { Cause, Effect, Either, Metric } from "effect"
import type { Applied, Entry } from "./applied.ts"
import type { PartitionState } from "./partitionState.ts"
import { publishReply } from "./replies.ts"
import type { StreamCommand } from "./streamCommand.ts"
import { Header } from "./transport.ts"

/**
 * A command that failed its last try (or whose write cannot be stored) is parked: a poison
 * row, and it counts as done.
 */
export const park = (p: PartitionState, into: Applied, entry: Entry, attempts: number, cause: Cause.Cause<unknown>, why = "after its last try") =>
  entry._tag === "local" ? parkContinuation(p, into, entry.command, attempts, cause, why) : parkStreamed(p, into, entry.message, attempts, cause, why)

// A continuation has no sequence of its own: it is parked under its held command's.
const parkContinuation = (p: PartitionState, into: Applied, command: unknown, attempts: number, cause: Cause.Cause<unknown>, why: string) =>
  Effect.gen(function*() {
    const error = Cause.pretty(cause)
    const seq = into.applied
    yield* Effect.logWarning(`actor continuation parked ${why}`, { kind: p.kind.name, key: into.key, seq, attempts })
    into.write.poison.push({ key: into.key, seq, command: yield* Effect.orDie(p.encodeCommand(command)), error, attempts })
    into.hold = undefined
    yield* Metric.increment(p.metrics.parked)
  })

const parkStreamed = (p: PartitionState, into: Applied, message: StreamCommand, attempts: number, cause: Cause.Cause<unknown>, why: string) =>
  Effect.gen(function*() {
    const error = Cause.pretty(cause)
    const seq = message.seq
    yield* Effect.logWarning(`actor command parked ${why}`, { kind: p.kind.name, key: into.key, seq, attempts })
    into.write.poison.push({ key: into.key, seq, command: Either.getOrUndefined(message.json()), raw: message.data, error, attempts })
    const timerId = message.header(Header.timer)
    if (timerId !== undefined) into.write.timersRemove.push(timerId)
    into.write.lastSeq = into.applied = seq
    into.hold = undefined
    into.acks.push(message)
    const replyTo = message.header(Header.replyTo)
    if (replyTo) into.replies.push(() => publishReply(p.env.bus, replyTo, { parked: `command failed ${attempts} times: ${firstLine(error)}` }))
    yield* Metric.increment(p.metrics.parked)
  })

export const firstLine = (text: string) => text.split("\n")[0] ?? text
