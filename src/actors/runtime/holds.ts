import { Duration } from "effect"
import { type Applied, copyOf, type Entry, type Resident, startApplied, streamEntry } from "./applied.ts"
import type { PartitionState } from "./partitionState.ts"
import type { StreamCommand } from "./streamCommand.ts"

// An actor that holds a command (ActorContext.hold) writes and acknowledges nothing until the
// continuation comes, in memory, and has been applied; its stream commands wait meanwhile. If
// the node dies first, JetStream gives the held commands to the next owner, which applies them
// again from the last committed state; if the continuation does not come by the hold's
// deadline, this node does the same.

/** How often held commands are told to JetStream to be still in progress (well inside ACK_WAIT). */
const HOLD_HEARTBEAT = Duration.seconds(10)

/** Where an actor's next command is applied: on a copy of what it holds, or on its state. */
export const applyingFrom = (p: PartitionState, key: string, r: Resident): Applied => {
  const held = p.holding.get(key)
  return held === undefined ? startApplied(key, r) : copyOf(held.into)
}

/**
 * An actor now holding: what it applied stays in memory, its later stream commands wait (after
 * those that waited behind the hold it continues, if its continuation holds anew).
 */
export const startHolding = (p: PartitionState, into: Applied, rest: ReadonlyArray<Entry>) => {
  const waiting: Array<StreamCommand> = p.holding.get(into.key)?.waiting ?? []
  for (const e of rest) if (e._tag === "stream") waiting.push(e.message)
  p.holding.set(into.key, { into, waiting, beatAt: Date.now() })
}

/** A hold ended in the retrying fiber: the commands that waited behind it come next. */
export const released = (p: PartitionState, key: string, held: { readonly waiting: Array<StreamCommand> } | undefined, mailbox: Array<Entry>) => {
  if (held === undefined) return
  p.holding.delete(key)
  mailbox.unshift(...held.waiting.splice(0).map(streamEntry))
}

/**
 * Held commands are kept from JetStream's redelivery while they wait; a hold past its deadline
 * (its continuation lost) ends, and its commands are applied again from the committed state.
 */
export const sweepHolds = (p: PartitionState, now: number) => {
  for (const [key, held] of p.holding) {
    if (p.continuing.has(key) || p.retrying.has(key)) continue
    if (held.into.hold !== undefined && now >= held.into.hold.deadline) {
      p.holding.delete(key)
      const r = p.residents.get(key)
      if (r !== undefined) r.busy = false
      for (const message of [...held.into.acks, ...held.waiting]) p.inbox.unsafeOffer(streamEntry(message))
      continue
    }
    if (now - held.beatAt >= Duration.toMillis(HOLD_HEARTBEAT)) {
      held.beatAt = now
      for (const message of held.into.acks) message.working()
      for (const message of held.waiting) message.working()
    }
  }
}
