import { Deferred, Duration, Effect, Schedule } from "effect"
import { type Consumer, JSONCodec, type JsMsg } from "nats"
import type { Connected } from "../../bus/Nats.ts"
import { streamEntry } from "./applied.ts"
import { partitionOf } from "./partitioning.ts"
import type { PartitionState } from "./partitionState.ts"
import { commandsOf } from "./streamCommand.ts"
import { consumerName, consumerSpec } from "./transport.ts"

/**
 * The names of a stream's consumers. JetStream's CONSUMER.NAMES, which nats.js does not wrap: in a
 * NATS cluster the meta leader answers it from its assignments, where CONSUMER.LIST (nats.js's
 * `consumers.list`) asks every consumer's leader for its state and made each takeover seconds slower.
 */
const consumerNames = async (bus: Connected, stream: string): Promise<ReadonlyArray<string>> => {
  const codec = JSONCodec<{ total?: number; consumers?: ReadonlyArray<string> | null; error?: { description?: string } }>()
  const request = JSONCodec<{ offset: number }>()
  const found: Array<string> = []
  for (;;) {
    const answer = codec.decode((await bus.nc.request(`$JS.API.CONSUMER.NAMES.${stream}`, request.encode({ offset: found.length }), { timeout: 5_000 })).data)
    if (answer.error !== undefined) throw new Error(`consumer names of ${stream}: ${answer.error.description ?? "refused"}`)
    const page = answer.consumers ?? []
    found.push(...page)
    if (page.length === 0 || found.length >= (answer.total ?? 0)) return found
  }
}

/** Whether a consumer is one of the partition's: the un-suffixed name all owners shared before, or an epoch's (consumerName). */
const isPartitionConsumer = (name: string, kind: string, partition: number) =>
  name === `${kind}_${partition}` || name.startsWith(`${kind}_${partition}_e`)

/**
 * The partition's durable consumer for this owner epoch (consumerName: one applier per consumer),
 * made anew. Every consumer of the partition is deleted first: those of previous epochs (and the
 * un-suffixed one all owners shared before), found by name, so that no consume loop of a previous
 * owner can pull from this one; a work-queue stream refuses a second consumer on the same subjects
 * anyway. What a previous owner was delivered and did not acknowledge (it died, or was paused with
 * commands in flight) is thereby delivered again at once and in stream order, instead of after its
 * ack wait; the last_seq check skips those already applied. A consumer that lost its place (see
 * watchStuckConsumer) is replaced the same way.
 */
export const durableConsumer = (p: PartitionState) =>
  Effect.gen(function*() {
    const { bus, names } = p.env
    const stream = names.stream(p.kind.name)
    yield* Effect.tryPromise(async () => {
      const previous = (await consumerNames(bus, stream)).filter((name) => isPartitionConsumer(name, p.kind.name, p.partition))
      // One already gone is fine; one that could not be deleted makes the add fail (overlapping
      // filters), and the partition is tried again on the next assignment round.
      await Promise.all(previous.map((name) => bus.jsm.consumers.delete(stream, name).catch(() => false)))
      await bus.jsm.consumers.add(stream, consumerSpec(names, p.kind.name, p.partition, p.epoch, p.env.maxAckPending))
    })
    return yield* Effect.tryPromise(() => bus.js.consumers.get(stream, consumerName(p.kind.name, p.partition, p.epoch)))
  })

/**
 * Receives the partition's commands until its scope closes, each routed as it arrives: to its
 * actor's retry fiber when it has one, else to the batch fiber. Returns how to drain.
 */
export const consumeCommands = (p: PartitionState, consumer: Consumer) =>
  Effect.gen(function*() {
    const messages = yield* Effect.acquireRelease(
      Effect.tryPromise(() =>
        consumer.consume({
          max_messages: Math.min(512, p.env.maxAckPending),
          expires: 5_000,
          // Not abort_on_missing_resource: nats.js would then end the loop on a 503 (no
          // responders) too, which a NATS cluster answers while a consumer's leader moves, and
          // drop the partition for nothing. A loop whose consumer a next owner deleted pulls
          // nothing: the name is its own epoch's, which nobody makes again.
          callback: (message) => route(p, message)
        })
      ),
      (iterator) => Effect.promise(() => iterator.close().catch(() => undefined))
    )
    // The consume loop ends only if the connection closed for good.
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

/** A stream's message count, asked at most once a second per stream and connection. */
const counts = new WeakMap<Connected, Map<string, { readonly at: number; readonly messages: Promise<number> }>>()
const streamMessages = (bus: Connected, stream: string) => {
  let byStream = counts.get(bus)
  if (byStream === undefined) counts.set(bus, byStream = new Map())
  const known = byStream.get(stream)
  if (known !== undefined && Date.now() - known.at < 1_000) return known.messages
  const messages = bus.jsm.streams.info(stream).then((info) => info.state.messages)
  byStream.set(stream, { at: Date.now(), messages })
  return messages
}

/** How many commands a stream holds on the subjects `filter` matches. */
const heldFor = async (bus: Connected, stream: string, filter: string) => {
  const held = await bus.jsm.streams.info(stream, { subjects_filter: filter })
  return Object.values(held.state.subjects ?? {}).reduce((n, count) => n + count, 0)
}

/** How often an owned partition's consumer is checked against its stream, and how many checks in a row must find it stuck. */
const STUCK_CHECK_EVERY = Duration.seconds(20)
const STUCK_STRIKES = 2

/**
 * Watches for a consumer that lost its place: the stream holds commands of this partition (a
 * work-queue stream keeps exactly what is not yet acknowledged) while the consumer reports none
 * pending and none awaiting an acknowledgement, and nothing is in flight here. nats-server before
 * 2.10.x can leave a consumer so after its leader moves (nats-io/nats-server#6469): its commands
 * would never be delivered. Found twice in a row, the consumer is deleted; the partition drops it
 * ("consumer closed") and is taken again with a new one, which delivers everything the stream holds
 * (what was applied already is skipped by its position).
 */
export const watchStuckConsumer = (p: PartitionState) =>
  Effect.gen(function*() {
    const { bus, names } = p.env
    const stream = names.stream(p.kind.name)
    const durable = consumerName(p.kind.name, p.partition, p.epoch)
    const filter = names.subject(p.kind.name, p.partition, ">")
    let strikes = 0
    for (;;) {
      yield* Effect.sleep(STUCK_CHECK_EVERY)
      const stuck = yield* Effect.tryPromise(async () => {
        // Nothing in the stream at all (the usual idle state): one request, shared by the kind's
        // partitions on this node, for the whole check.
        if ((await streamMessages(bus, stream)) === 0) return 0
        const consumer = await bus.jsm.consumers.info(stream, durable)
        if (consumer.num_pending > 0 || consumer.num_ack_pending > 0) return 0
        return heldFor(bus, stream, filter)
      }).pipe(Effect.orElseSucceed(() => 0))
      strikes = stuck > 0 ? strikes + 1 : 0
      if (strikes < STUCK_STRIKES) continue
      yield* Effect.logWarning("a consumer lost its place: its stream holds commands it reports none of; re-creating it", {
        kind: p.kind.name,
        partition: p.partition,
        commands: stuck
      })
      yield* Effect.tryPromise(() => bus.jsm.consumers.delete(stream, durable)).pipe(Effect.ignore)
      // A consume loop outlives its consumer's deletion (nats.js waits for it to come back): the
      // partition is dropped here, and taken again with a new consumer.
      yield* Deferred.succeed(p.lost, "its consumer lost its place and was deleted")
      return
    }
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
