import { Duration } from "effect"
import { AckPolicy, type ConsumerConfig, DeliverPolicy, DiscardPolicy, nanos, ReplayPolicy, RetentionPolicy, StorageType, type StreamConfig } from "nats"
import type { BusNamesShape } from "../../bus/BusNames.ts"

/** Headers Herald puts on command messages. */
export const Header = {
  /** Core NATS inbox awaiting the reply of an `ask`. */
  replyTo: "Herald-Reply-To",
  /** Set when a durable timer fired the command. */
  timer: "Herald-Timer",
  /** Set (to the number of commands) on a message of the outbox relay carrying several (streamCommand.ts). */
  batch: "Herald-Batch"
} as const

/** How long a delivered command may stay unacknowledged before JetStream redelivers it. */
export const ACK_WAIT = Duration.seconds(30)

/**
 * One stream per kind. Work-queue retention: a command is removed once acknowledged, so the
 * stream holds exactly the work not yet done, and a consumer re-created on takeover starts from
 * the oldest unacknowledged command. Discard-new: when limits are hit publishing fails loudly
 * instead of silently dropping old, unprocessed commands.
 */
export const streamSpec = (names: BusNamesShape, kind: string): Partial<StreamConfig> & { name: string } => ({
  name: names.stream(kind),
  subjects: [names.subject(kind, ">")],
  retention: RetentionPolicy.Workqueue,
  storage: StorageType.File,
  discard: DiscardPolicy.New,
  // Publishes carry Nats-Msg-Id; a retried publish inside this window is dropped as a duplicate.
  duplicate_window: nanos(Duration.toMillis(Duration.minutes(2)))
})

/**
 * The partition's consumer under one owner epoch. One applier per consumer: an old owner's consume
 * loop that outlives its partition (a paused node woken up) asks for its consumer by name and pulls
 * again; under a name shared by every owner it pulled the next owner's commands, which its fenced
 * commit could not settle, and the next owner meanwhile committed the actor's later commands past
 * them (applied later, they were skipped as already applied: lost). Under its own epoch's name, a
 * stale loop finds its consumer gone.
 */
export const consumerName = (kind: string, partition: number, epoch: number) => `${kind}_${partition}_e${epoch}`

/** Durable pull consumer of one partition under one owner epoch: explicit acks, bounded in-flight work. */
export const consumerSpec = (names: BusNamesShape, kind: string, partition: number, epoch: number, maxAckPending: number): Partial<ConsumerConfig> => ({
  durable_name: consumerName(kind, partition, epoch),
  filter_subject: names.subject(kind, partition, ">"),
  ack_policy: AckPolicy.Explicit,
  deliver_policy: DeliverPolicy.All,
  replay_policy: ReplayPolicy.Instant,
  ack_wait: nanos(Duration.toMillis(ACK_WAIT)),
  max_ack_pending: maxAckPending,
  // Redelivery is unbounded here: the runtime counts tries itself and parks poison commands.
  max_deliver: -1
})

export const commandSubject = (names: BusNamesShape, kind: string, partition: number, key: string) => names.subject(kind, partition, key)

/**
 * Ephemeral requests of (kind, partition): outside every kind's stream (`_` cannot start a kind
 * name), so they are never stored.
 */
export const ephemeralSubject = (names: BusNamesShape, kind: string, partition: number) => names.subject("_ephemeral", kind, partition)

export type EphemeralReply = { readonly ok: unknown } | { readonly error: string }

/** The actor key is the last token of `<prefix>.<kind>.<partition>.<key>`. */
export const keyOfSubject = (subject: string): string => subject.slice(subject.lastIndexOf(".") + 1)

const encoder = new TextEncoder()
const decoder = new TextDecoder()

export const encodeJson = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value))
export const decodeJson = (data: Uint8Array): unknown => JSON.parse(decoder.decode(data))
