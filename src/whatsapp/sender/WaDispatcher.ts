import { Effect, FiberSet } from "effect"
import type { LeaseGuard } from "../../actors/runtime/leaseGuard.ts"
import type { GatewayErrorRecord } from "../../domain/gatewayError.ts"
import type { WaSendOutcome } from "../../gateway/wa.ts"
import { WaGateway } from "../../gateway/WaGateway.ts"
import { toCloudMessage } from "../cloud/payload.ts"
import type { CloudContent } from "../message/publicMessage.ts"
import { digitsOf } from "../events.ts"

/** What a send to Meta needs: its recipient (E.164) and what goes under the body's `[type]`. */
export interface WaPayload {
  readonly to: string
  readonly content: CloudContent
}

/** A request this node did not make because it no longer holds the number's partition: safe to send again. */
const notSent = (messageId: string): GatewayErrorRecord => ({
  success: false,
  message: "not sent",
  detail: "The node about to send this message gave up the number's partition first; the request never left, and the message is sent again.",
  category: "gateway",
  retryable: true,
  message_id: messageId
})

/**
 * The Cloud API calls of the `wa_sender` actors this node owns. The actor decides what goes out
 * and when (pacing, order, the bound on requests in flight); this runs the requests and tells the
 * actor each answer through `report`. It also keeps the payload of every message a local actor
 * accepted until it is sent, so that the common case reads no content back from Postgres.
 */
export class WaDispatcher extends Effect.Service<WaDispatcher>()("herald/whatsapp/WaDispatcher", {
  scoped: Effect.gen(function*() {
    const gateway = yield* WaGateway
    const fibers = yield* FiberSet.make()
    const payloads = new Map<string, WaPayload>()
    const handling = new Set<string>()

    const remember = (messageId: string, payload: WaPayload) => void payloads.set(messageId, payload)
    const payloadOf = (messageId: string) => payloads.get(messageId)

    /**
     * Starts the request; returns at once. `report` must not fail. The number's partition lease is
     * checked just before the request leaves: a node that no longer holds it sends nothing and
     * reports the message as not sent (retryable), so its owner sends it.
     */
    const submit = (job: {
      readonly phoneNumberId: string
      readonly messageId: string
      readonly payload: WaPayload
      readonly lease: LeaseGuard
      readonly report: (outcome: WaSendOutcome) => Effect.Effect<void>
    }) =>
      Effect.suspend(() => {
        handling.add(job.messageId)
        const body = toCloudMessage(digitsOf(job.payload.to), job.payload.content, job.messageId)
        const send = job.lease.current.pipe(
          Effect.matchEffect({
            onSuccess: () => gateway.send(job.phoneNumberId, body, job.messageId),
            onFailure: () => Effect.succeed<WaSendOutcome>({ _tag: "Rejected", error: notSent(job.messageId) })
          })
        )
        return FiberSet.run(
          fibers,
          send.pipe(
            Effect.tap((outcome) =>
              Effect.sync(() => {
                // A retry sends it again from here; anything else is the message's last request.
                if (!(outcome._tag === "Rejected" && outcome.error.retryable)) payloads.delete(job.messageId)
              })
            ),
            Effect.flatMap(job.report),
            Effect.ensuring(Effect.sync(() => handling.delete(job.messageId)))
          )
        )
      }).pipe(Effect.asVoid)

    /** Whether this node is waiting for Meta's answer to the message now. */
    const isHandling = (messageId: string) => handling.has(messageId)

    return { remember, payloadOf, submit, isHandling } as const
  })
}) {}
