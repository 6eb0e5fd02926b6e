import { Duration, Effect, Option, Schema } from "effect"
import { createInbox, type MsgHdrs, headers as natsHeaders } from "nats"
import { randomUUID } from "node:crypto"
import { Nats, NatsUnavailable } from "../../bus/Nats.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { currentTraceparent, TRACEPARENT } from "../../observability/Tracing.ts"
import type { ActorKind } from "./ActorKind.ts"
import { isValidKey, partitionOf } from "./partitioning.ts"
import { commandSubject, decodeJson, type EphemeralReply, ephemeralSubject, encodeJson, Header, streamSpec } from "./transport.ts"

export class AskTimeout extends Schema.TaggedError<AskTimeout>()("AskTimeout", {
  kind: Schema.String,
  key: Schema.String,
  message: Schema.String
}) {}

/** The command failed every try and was parked in the poison table. */
export class CommandParked extends Schema.TaggedError<CommandParked>()("CommandParked", {
  kind: Schema.String,
  key: Schema.String,
  message: Schema.String
}) {}

export class InvalidActorKey extends Schema.TaggedError<InvalidActorKey>()("InvalidActorKey", {
  key: Schema.String,
  message: Schema.String
}) {}

// Building a Schema encoder is far costlier than running one: one per kind, built on first use.
const encoders = new WeakMap<ActorKind.AnyAddress, (command: unknown) => Effect.Effect<unknown, unknown>>()
export const encoderOf = (kind: ActorKind.AnyAddress) => {
  let encode = encoders.get(kind)
  if (encode === undefined) {
    encode = Schema.encode(kind.command as Schema.Schema<unknown, unknown>)
    encoders.set(kind, encode)
  }
  return encode
}

/** No owner answered an ephemeral request in time (none owns the partition yet, or the bus is down). */
export class EphemeralUnavailable extends Schema.TaggedError<EphemeralUnavailable>()("EphemeralUnavailable", {
  kind: Schema.String,
  message: Schema.String
}) {}

/** What an actor sends back to an `ask`. */
export type ReplyWire = { readonly exit: unknown } | { readonly parked: string }

export interface SendOptions {
  /** Deduplication id (Nats-Msg-Id): a publish repeated with the same id is dropped. */
  readonly msgId?: string
  /** A core NATS inbox told `{parked}` should the command be parked instead of applied. */
  readonly replyTo?: string
}

/**
 * Sends commands to actors from anywhere (API nodes included). `send` returns once JetStream has
 * stored the command; `ask` also waits for the actor's reply, which it publishes after the
 * command's effects committed.
 */
export class ActorClient extends Effect.Service<ActorClient>()("herald/ActorClient", {
  effect: Effect.gen(function*() {
    const nats = yield* Nats
    const config = yield* AppConfig
    const streams = new Map<string, Effect.Effect<void, NatsUnavailable>>()

    /** The kind's stream, created once per process (memoised; forgotten after a failure). */
    const ensureKind = (kind: ActorKind.AnyAddress): Effect.Effect<void, NatsUnavailable> =>
      Effect.suspend(() => {
        let once = streams.get(kind.name)
        if (once === undefined) {
          once = Effect.runSync(
            Effect.cached(
              nats.ensureStream(streamSpec(nats.names, kind.name)).pipe(
                Effect.asVoid,
                Effect.mapError((e) => new NatsUnavailable({ message: e.message }))
              )
            )
          )
          streams.set(kind.name, once)
        }
        return once.pipe(Effect.tapError(() => Effect.sync(() => streams.delete(kind.name))))
      })

    const publish = <K extends ActorKind.AnyAddress>(
      kind: K,
      key: string,
      command: ActorKind.Command<K>,
      options: SendOptions
    ) =>
      Effect.gen(function*() {
        if (!isValidKey(key)) {
          return yield* new InvalidActorKey({ key, message: "actor keys are 1-200 characters without '.', '*', '>' or spaces" })
        }
        yield* ensureKind(kind)
        const encoded = yield* encoderOf(kind)(command).pipe(Effect.orDie)
        const partition = partitionOf(key, config.partitions)
        const traceparent = yield* currentTraceparent
        let h: MsgHdrs | undefined
        if (options.replyTo || traceparent) {
          h = natsHeaders()
          if (options.replyTo) h.set(Header.replyTo, options.replyTo)
          if (traceparent) h.set(TRACEPARENT, traceparent)
        }
        // One id for every try: a try stored before its answer was lost makes the next a duplicate.
        const ack = yield* nats.publish(commandSubject(nats.names, kind.name, partition, key), encodeJson(encoded), {
          msgID: options.msgId ?? randomUUID(),
          headers: h
        })
        return { partition, seq: ack.seq, duplicate: ack.duplicate }
      })

    /** A command's publish as OpenTelemetry's messaging conventions name it: its trace goes on in the message's headers. */
    const producing = <A, E, R>(kind: ActorKind.AnyAddress, key: string, effect: Effect.Effect<A, E, R>) =>
      Effect.withSpan(effect, `send ${kind.name}`, {
        kind: "producer",
        attributes: {
          "messaging.system": "nats",
          "messaging.operation.type": "send",
          "messaging.destination.name": nats.names.stream(kind.name),
          "herald.actor.kind": kind.name,
          "herald.actor.key": key
        }
      })

    const send = <K extends ActorKind.AnyAddress>(kind: K, key: string, command: ActorKind.Command<K>, options: SendOptions = {}) =>
      producing(kind, key, publish(kind, key, command, options))

    /**
     * Runs `use` with a fresh core NATS inbox and waits for the first message on it: none when
     * `timeout` passes first. The subscription exists before `use` runs, so no answer is missed.
     */
    const awaitingInbox = <E, R>(use: (inbox: string) => Effect.Effect<unknown, E, R>, timeout: Duration.DurationInput) =>
      Effect.gen(function*() {
        const { nc } = yield* nats.connected
        const inbox = createInbox(nats.names.subject("_inbox"))
        const subscription = nc.subscribe(inbox, { max: 1 })
        const first = Effect.async<Option.Option<unknown>>((resume) => {
          void (async () => {
            for await (const m of subscription) return resume(Effect.succeed(Option.some(decodeJson(m.data))))
            resume(Effect.succeed(Option.none()))
          })()
          return Effect.sync(() => subscription.unsubscribe())
        })
        return yield* Effect.zipRight(use(inbox), first).pipe(
          Effect.timeoutOption(timeout),
          Effect.map(Option.flatten),
          Effect.ensuring(Effect.sync(() => subscription.unsubscribe()))
        )
      })

    /**
     * Request-reply. The command is durable like a `send`: when no answer comes in time the caller
     * gets `AskTimeout`, and the actor still processes the command when an owner gets to it.
     */
    const ask = <K extends ActorKind.Any, Req extends ActorKind.Command<K> & Schema.TaggedRequest.All>(
      kind: K,
      key: string,
      request: Req,
      options: SendOptions & { readonly timeout?: Duration.DurationInput } = {}
    ): Effect.Effect<
      Schema.WithResult.Success<Req>,
      Schema.WithResult.Failure<Req> | AskTimeout | CommandParked | NatsUnavailable | InvalidActorKey
    > =>
      Effect.gen(function*() {
        const timeout = options.timeout ?? Duration.seconds(10)
        const answer = yield* awaitingInbox((inbox) => producing(kind, key, publish(kind, key, request, { ...options, replyTo: inbox })), timeout)
        if (Option.isNone(answer)) {
          return yield* new AskTimeout({ kind: kind.name, key, message: `no answer from ${kind.name}/${key} within ${Duration.format(timeout)}` })
        }
        const wire = answer.value as ReplyWire
        if ("parked" in wire) return yield* new CommandParked({ kind: kind.name, key, message: wire.parked })
        const exit = yield* Schema.decodeUnknown(Schema.exitSchema(request))(wire.exit).pipe(Effect.orDie)
        return yield* exit
      }) as any

    /**
     * An ephemeral request (ActorKind `ephemeral`) to the owner of the key's partition, over core
     * NATS request-reply: one round trip, nothing stored. Not durable: without an owner it fails.
     */
    const askEphemeral = (kind: ActorKind.Any, key: string, request: unknown, timeout: Duration.DurationInput = Duration.millis(500)) =>
      Effect.flatMap(
        Effect.mapError(nats.connected, (e) => new EphemeralUnavailable({ kind: kind.name, message: e.message })),
        ({ nc }) =>
          Effect.tryPromise({
            try: () =>
              nc.request(ephemeralSubject(nats.names, kind.name, partitionOf(key, config.partitions)), encodeJson({ key, request }), {
                timeout: Duration.toMillis(timeout)
              }),
            catch: (cause) => new EphemeralUnavailable({ kind: kind.name, message: `no answer from the ${kind.name} owner: ${String(cause)}` })
          }).pipe(
            Effect.flatMap((message) => {
              const reply = decodeJson(message.data) as EphemeralReply
              return "ok" in reply ? Effect.succeed(reply.ok) : Effect.die(new Error(`${kind.name} ephemeral handler failed: ${reply.error}`))
            })
          )
      )

    return { send, ask, askEphemeral, awaitingInbox, ensureKind } as const
  })
}) {}
