import { Effect } from "effect"
import { encodeJson } from "../actors/runtime/transport.ts"
import { Nats } from "../bus/Nats.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { type LiveEventOf, type LiveKind, liveSubject } from "./liveSubjects.ts"

/**
 * Publishes live events on core NATS (liveSubjects.ts). Called after the change it reports has
 * committed, so a subscriber never hears of something that did not happen. Never fails its caller:
 * with NATS down the event is dropped (subscribers re-read what they missed; webhooks are the
 * durable feed).
 */
export class LiveEvents extends Effect.Service<LiveEvents>()("herald/live/LiveEvents", {
  effect: Effect.gen(function*() {
    const nats = yield* Nats
    const config = yield* AppConfig

    const subject = <K extends LiveKind>(accountId: string, kind: K) => liveSubject(config.natsPrefix, accountId, kind)

    const publish = <K extends LiveKind>(accountId: string, kind: K, event: LiveEventOf[K]) =>
      Effect.flatMap(nats.connected, ({ nc }) => Effect.sync(() => nc.publish(subject(accountId, kind), encodeJson(event)))).pipe(
        Effect.catchAll(() => Effect.void)
      )

    return { publish, subject } as const
  })
}) {}
