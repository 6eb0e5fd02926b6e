import { Deferred, Duration, Effect, Schedule } from "effect"
import type { Consumer, JsMsg } from "nats"
import { streamEntry } from "./applied.ts"
import { partitionOf } from "./partitioning.ts"
import type { PartitionState } from "./partitionState.ts"
import { commandsOf } from "./streamCommand.ts"
import { consumerName, consumerSpec } from "./transport.ts"

/** The partition's durable consumer on its kind's stream. */
export const durableConsumer = (p: PartitionState) =>
  Effect.gen(function*() {
    const { bus, names } = p.env
    const stream = names.stream(p.kind.name)
    const durable = consumerName(p.kind.name, p.partition)
    yield* Effect.tryPromise(async () => {
      const existing = await bus.jsm.consumers.info(stream, durable).catch(() => undefined)
      // Commands delivered to a previous owner that died are pending until their ack wait
      // runs out; re-creating the consumer redelivers them now (the stream keeps every
      // unacknowledged command), and the last_seq check skips those already applied.
      if (existing !== undefined && existing.num_ack_pending > 0) await bus.jsm.consumers.delete(stream, durable)
      if (existing === undefined || existing.num_ack_pending > 0) {
        await bus.jsm.consumers.add(stream, consumerSpec(names, p.kind.name, p.partition, p.env.maxAckPending))
      }
    })
    return yield* Effect.tryPromise(() => bus.js.consumers.get(stream, durable))
  })

/**
 * Receives the partition's commands until its scope closes, each routed as it arrives: to its
 * actor's retry fiber when it has one, else to the batch fiber. Returns how to drain.
 */
export const consumeCommands = (p: PartitionState, consumer: Consumer) =>
  Effect.gen(function*() {
    const messages = yield* Effect.acquireRelease(
      Effect.tryPromise(() => consumer.consume({ max_messages: Math.min(512, p.env.maxAckPending), expires: 5_000, callback: (message) => route(p, message) })),
      (iterator) => Effect.promise(() => iterator.close().catch(() => undefined))
    )
    // The consume loop ends only if the consumer vanished or the connection closed for good.
    yield* Effect.promise(() => messages.closed()).pipe(
      Effect.zipRight(Deferred.succeed(p.lost, "consumer closed")),
      Effect.forkScoped
    )

    /** Stops fetching and waits (bounded) until every command received was acknowledged. */
    return (deadline: Duration.DurationInput) =>
      Effect.gen(function*() {
        yield* Effect.promise(() => messages.close().catch(() => undefined))
        yield* Effect.suspend(() => (p.inflight <= 0 ? Effect.void : Effect.fail("busy"))).pipe(
          Effect.retry(Schedule.spaced(Duration.millis(20))),
          Effect.timeout(deadline),
          Effect.ignore
        )
      })
  })

/** A message's commands (several for a batch of the outbox relay), each routed in order. */
const route = (p: PartitionState, message: JsMsg) => {
  const commands = commandsOf(message, (key) => partitionOf(key, p.env.partitions) === p.partition)
  p.inflight += commands.length
  for (const command of commands) {
    const entry = streamEntry(command)
    const mailbox = p.retrying.get(entry.key)
    if (mailbox !== undefined) mailbox.push(entry)
    else p.inbox.unsafeOffer(entry)
  }
}
