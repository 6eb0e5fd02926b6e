import { Effect, type Exit, Schema } from "effect"
import type { Connected } from "../../bus/Nats.ts"
import type { ReplyWire } from "./ActorClient.ts"
import { encodeJson } from "./transport.ts"

/** Answers a waiting `ask` on its core NATS inbox (only ever after the commit). */
export const publishReply = (bus: Connected, replyTo: string, wire: ReplyWire) => Effect.sync(() => bus.nc.publish(replyTo, encodeJson(wire)))

// A request's reply travels as its Exit, encoded with the request's own success/failure schemas.
export const encodeExit = (request: Schema.TaggedRequest.All, exit: Exit.Exit<unknown, unknown>): unknown =>
  Schema.encodeSync(Schema.exitSchema(request as any) as Schema.Schema<Exit.Exit<unknown, unknown>, unknown>)(exit)
