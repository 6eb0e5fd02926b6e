import { Effect } from "effect"
import type { Connected } from "../../bus/Nats.ts"
import { decodeJson, type EphemeralReply, encodeJson } from "./transport.ts"

/**
 * Answers the kind's ephemeral requests for this partition while it is owned: a plain core NATS
 * subscription, closed with the partition's scope (before its lease is given back).
 */
export const serveEphemeral = (bus: Connected, subject: string, handle: (key: string, request: unknown) => unknown) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      bus.nc.subscribe(subject, {
        callback: (error, message) => {
          if (error !== null) return
          let answer: EphemeralReply
          try {
            const { key, request } = decodeJson(message.data) as { key: string; request: unknown }
            answer = { ok: handle(key, request) }
          } catch (cause) {
            answer = { error: cause instanceof Error ? cause.message : String(cause) }
          }
          message.respond(encodeJson(answer))
        }
      })
    ),
    (subscription) => Effect.sync(() => subscription.unsubscribe())
  )
