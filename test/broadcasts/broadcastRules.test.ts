import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { AppConfig, type AppSettings } from "../../src/config/AppConfig.ts"
import { BroadcastKind, Cancel, Expand, Start } from "../../src/broadcasts/BroadcastKind.ts"
import { BroadcastsRepo, type Counters } from "../../src/broadcasts/BroadcastsRepo.ts"
import { BroadcastTargets } from "../../src/broadcasts/BroadcastTargets.ts"
import { ChunkDone, SendChunk } from "../../src/messaging/chunkProtocol.ts"
import { CHUNK_TARGETS, CHUNK_WINDOW, EXPAND_BATCH } from "../../src/broadcasts/chunking.ts"
import { Webhooks } from "../../src/webhooks/Webhooks.ts"
import { applyBehaviour } from "../support/behaviour.ts"

// The broadcast actor's rules (src/broadcasts/BroadcastKind.ts), one command at a time with a
// recording context and a repository in memory: no NATS, no Postgres. It waits for a scheduled
// time and for an import into its list, writes targets in batches, hands the bot's sender a window
// of chunks with deterministic message ids, completes once every chunk is done (the event only
// with the update that completes it), and a cancel cancels what was not handed out.

const ID = "b_1"

const world = (options: { readonly total: number; readonly scheduledAt?: Date | null; readonly status?: string; readonly busy?: boolean }) => {
  const calls: Array<string> = []
  let busy = options.busy ?? false
  const counters = (status: string): Counters => ({ status, totalCount: options.total, sentCount: options.total, deliveredCount: 0, readCount: 0, failedCount: 0, cancelledCount: 0 } as Counters)
  const repo = {
    header: () =>
      Effect.succeed({ accountId: "acc_1", botId: "bot_1", listId: "list_1", status: options.status ?? "queued", scheduledAt: options.scheduledAt ?? null }),
    snapshotList: () => Effect.sync(() => (busy ? ("Busy" as const) : { total: options.total, upto: String(options.total) })),
    expand: (input: { after: string; upto: string; limit: number }) =>
      Effect.sync(() => {
        const after = Number(input.after)
        const read = Math.max(0, Math.min(input.limit, Number(input.upto) - after))
        calls.push(`expand ${after}+${read}`)
        return { read, last: read === 0 ? null : String(after + read) }
      }),
    counters: () => Effect.succeed(counters("running")),
    markRunning: (_id: string, total: number) => Effect.sync(() => void calls.push(`running ${total}`)),
    markCompleted: () => Effect.sync(() => (calls.push("completed"), true)),
    cancelPending: (_id: string, first: number, _last: number | null, unwritten: number) => Effect.sync(() => void calls.push(`cancel from ${first}, ${unwritten} unwritten`))
  }
  const emitted: Array<string> = []
  const layer = Layer.mergeAll(
    Layer.succeed(BroadcastsRepo, repo as unknown as BroadcastsRepo),
    Layer.succeed(BroadcastTargets, repo as unknown as BroadcastTargets),
    Layer.succeed(Webhooks, { emit: (e: { type: string }) => Effect.sync(() => void emitted.push(e.type)) } as unknown as Webhooks),
    AppConfig.make({ natsPrefix: "test" } as AppSettings)
  )
  return { calls, emitted, layer, setBusy: (b: boolean) => (busy = b) }
}

const apply = (w: ReturnType<typeof world>, state: typeof BroadcastKind.state.Type, command: typeof BroadcastKind.command.Type) =>
  Effect.provide(applyBehaviour(BroadcastKind, state, command, { key: ID }), w.layer)

const chunksOf = (sends: ReadonlyArray<{ command: unknown; msgId: string | undefined }>) =>
  sends.filter((s) => s.command instanceof SendChunk).map((s) => [(s.command as SendChunk).order.chunkNo, s.msgId])

describe("broadcast rules", () => {
  it.effect("scheduled later: waits on a timer at its time; a busy list: tried again in a second", () =>
    Effect.gen(function*() {
      const at = new Date(Date.now() + 3_600_000)
      const later = yield* apply(world({ total: 10, scheduledAt: at }), BroadcastKind.initial(ID), new Start())
      expect(later.state.phase).toBe("waiting")
      expect(later.recorded.timers).toEqual([{ command: new Start(), when: { at }, id: "start" }])
      const busy = world({ total: 10, busy: true })
      const waiting = yield* apply(busy, BroadcastKind.initial(ID), new Start())
      expect(waiting.state.phase).toBe("waiting")
      expect(Duration.toMillis((waiting.recorded.timers[0]!.when as { after: Duration.DurationInput }).after)).toBe(1_000)
      expect(busy.calls).toEqual([])
      busy.setBusy(false)
      const started = yield* apply(busy, waiting.state, new Start())
      expect(started.state.phase).toBe("running")
    }))

  it.effect("a cancelled broadcast never starts", () =>
    Effect.gen(function*() {
      const w = world({ total: 10, status: "cancelled" })
      const { state, recorded } = yield* apply(w, BroadcastKind.initial(ID), new Start())
      expect(state.phase).toBe("finished")
      expect(recorded.sends).toEqual([])
      expect(recorded.persisted).toEqual([])
    }))

  it.effect("a window of chunks at a time, each id deterministic; the next handed out as one is done; completed once", () =>
    Effect.gen(function*() {
      const total = (CHUNK_WINDOW + 3) * CHUNK_TARGETS
      const w = world({ total })
      const started = yield* apply(w, BroadcastKind.initial(ID), new Start())
      for (const write of started.recorded.persisted) yield* (write as Effect.Effect<void>)
      expect(w.calls).toEqual([`expand 0+${total}`, `running ${total}`])
      expect(chunksOf(started.recorded.sends)).toEqual(Array.from({ length: CHUNK_WINDOW }, (_, n) => [n, `chunk-${ID}-${n}`]))
      let state = started.state
      const handedLater: Array<unknown> = []
      for (let n = 0; n < CHUNK_WINDOW + 3; n++) {
        const done = yield* apply(w, state, new ChunkDone({ chunkNo: n }))
        handedLater.push(...chunksOf(done.recorded.sends))
        // Done twice (redelivered): nothing more.
        const again = yield* apply(w, done.state, new ChunkDone({ chunkNo: n }))
        expect(again.state).toEqual(done.state)
        expect(again.recorded.sends).toEqual([])
        state = done.state
        if (n < CHUNK_WINDOW + 2) expect(done.recorded.persisted).toEqual([])
        else {
          expect(state.phase).toBe("finished")
          for (const write of done.recorded.persisted) yield* (write as Effect.Effect<void>)
        }
      }
      expect(handedLater).toEqual([CHUNK_WINDOW, CHUNK_WINDOW + 1, CHUNK_WINDOW + 2].map((n) => [n, `chunk-${ID}-${n}`]))
      expect(w.calls.filter((c) => c === "completed")).toHaveLength(1)
      expect(w.emitted).toEqual(["broadcast.completed"])
    }))

  it.effect("a list larger than a batch is written in steps, each step a command with its own id", () =>
    Effect.gen(function*() {
      const w = world({ total: EXPAND_BATCH + 10 })
      const first = yield* apply(w, BroadcastKind.initial(ID), new Start())
      expect(first.state.expanded).toBe(false)
      expect(first.recorded.sends.filter((s) => s.command instanceof Expand).map((s) => s.msgId)).toEqual([`expand-${ID}-${EXPAND_BATCH}`])
      const second = yield* apply(w, first.state, new Expand())
      expect(second.state).toMatchObject({ expanded: true, written: EXPAND_BATCH + 10 })
      expect(second.recorded.sends.filter((s) => s.command instanceof Expand)).toEqual([])
    }))

  it.effect("a cancel while running cancels what was not handed out and completes nothing", () =>
    Effect.gen(function*() {
      const total = (CHUNK_WINDOW + 3) * CHUNK_TARGETS
      const w = world({ total })
      const started = yield* apply(w, BroadcastKind.initial(ID), new Start())
      const cancelled = yield* apply(w, started.state, new Cancel())
      for (const write of cancelled.recorded.persisted) yield* (write as Effect.Effect<void>)
      expect(w.calls).toContain(`cancel from ${CHUNK_WINDOW * CHUNK_TARGETS}, 0 unwritten`)
      expect(cancelled.recorded.cancelled).toEqual(["start"])
      let state = cancelled.state
      for (let n = 0; n < CHUNK_WINDOW; n++) {
        const done = yield* apply(w, state, new ChunkDone({ chunkNo: n }))
        expect(chunksOf(done.recorded.sends)).toEqual([])
        for (const write of done.recorded.persisted) yield* (write as Effect.Effect<void>)
        state = done.state
      }
      expect(state.phase).toBe("finished")
      expect(w.calls).not.toContain("completed")
      expect(w.emitted).toEqual([])
    }))
})

// The same actor for a WhatsApp campaign (docs/campaigns.md): its targets come from the audience's
// customers (or, for a retry, from the failed targets of the broadcast it retries), its chunks go
// to the number's wa_sender, its total is what was written, and its broadcast.completed goes to
// the developer webhook.
describe("campaign rules", () => {
  const NUMBER = "115416010524074"
  const campaign = (options: { readonly total: number; readonly written?: number; readonly audience?: unknown }) => {
    const calls: Array<string> = []
    const emitted: Array<{ type: string; channel?: string; botId: string | null }> = []
    const written = options.written ?? options.total
    const audience = options.audience ?? { kind: "query", filters: [{ trait: "city", op: "eq", value: "Pune" }], tags: [], segmentId: null }
    const header = {
      accountId: "acc_1",
      channel: "whatsapp",
      botId: null,
      listId: null,
      phoneNumberId: NUMBER,
      audience,
      status: "queued",
      scheduledAt: null,
      variables: { first_name: "there" }
    }
    const repo = {
      header: () => Effect.succeed(header),
      snapshotAudience: () => Effect.sync(() => (calls.push("snapshot audience"), { total: options.total, upto: "2026-11-29T10:00:00.000000Z" })),
      snapshotRetry: (of: string) => Effect.sync(() => (calls.push(`snapshot retry of ${of}`), { total: options.total, upto: String(options.total - 1) })),
      expandAudience: (input: { after: string; traits: ReadonlyArray<string> | null; limit: number }) =>
        Effect.sync(() => {
          calls.push(`audience after ${input.after} traits ${input.traits?.join(",")}`)
          return { read: written, last: "ffffffff-0000-0000-0000-000000000000" }
        }),
      expandRetry: (input: { sourceId: string; after: string }) =>
        Effect.sync(() => (calls.push(`retry ${input.sourceId} after ${input.after}`), { read: written, last: String(written - 1) })),
      counters: () => Effect.succeed({ status: "running", channel: "whatsapp", totalCount: written, sentCount: written, deliveredCount: 0, readCount: 0, failedCount: 0, cancelledCount: 0, skippedCount: 0 }),
      markRunning: (_id: string, total: number) => Effect.sync(() => void calls.push(`running ${total}`)),
      setTotal: (_id: string, total: number) => Effect.sync(() => void calls.push(`total ${total}`)),
      markCompleted: () => Effect.sync(() => (calls.push("completed"), true))
    }
    const layer = Layer.mergeAll(
      Layer.succeed(BroadcastsRepo, repo as unknown as BroadcastsRepo),
      Layer.succeed(BroadcastTargets, repo as unknown as BroadcastTargets),
      Layer.succeed(Webhooks, { emit: (e: { type: string; channel?: string; botId: string | null }) => Effect.sync(() => void emitted.push(e)) } as unknown as Webhooks),
      AppConfig.make({ natsPrefix: "test" } as AppSettings)
    )
    const run = (state: typeof BroadcastKind.state.Type, command: typeof BroadcastKind.command.Type) =>
      Effect.provide(applyBehaviour(BroadcastKind, state, command, { key: ID }), layer)
    return { calls, emitted, run }
  }
  const persist = (recorded: { readonly persisted: ReadonlyArray<unknown> }) => Effect.forEach(recorded.persisted, (w) => w as Effect.Effect<void>, { discard: true })

  it.effect("writes the audience's customers with the traits its values name, hands chunks to the number's wa_sender, and its total is what was written", () =>
    Effect.gen(function*() {
      // Counted 2,500 at the start; 2,400 written (some customers' traits changed meanwhile).
      const w = campaign({ total: 2_500, written: 2_400 })
      const started = yield* w.run(BroadcastKind.initial(ID), new Start())
      yield* persist(started.recorded)
      expect(w.calls).toEqual(["snapshot audience", "audience after 00000000-0000-0000-0000-000000000000 traits first_name", "running 2500", "total 2400"])
      expect(started.state).toMatchObject({ channel: "whatsapp", botId: NUMBER, written: 2_400, expanded: true })
      const chunks = started.recorded.sends.filter((s) => s.command instanceof SendChunk)
      expect(chunks.map((s) => [s.kind, s.key, (s.command as SendChunk).order.last])).toEqual([["wa_sender", NUMBER, 999], ["wa_sender", NUMBER, 1_999], ["wa_sender", NUMBER, 2_399]])
      let state = started.state
      for (const n of [0, 1, 2]) {
        const done = yield* w.run(state, new ChunkDone({ chunkNo: n }))
        yield* persist(done.recorded)
        state = done.state
      }
      expect(state.phase).toBe("finished")
      expect(w.emitted).toEqual([expect.objectContaining({ type: "broadcast.completed", channel: "whatsapp", botId: null })])
    }))

  it.effect("a retry writes the failed targets of the broadcast it retries, from before its first target", () =>
    Effect.gen(function*() {
      const w = campaign({ total: 3, audience: { kind: "retry", of: "b_0" } })
      const started = yield* w.run(BroadcastKind.initial(ID), new Start())
      expect(w.calls).toEqual(["snapshot retry of b_0", "retry b_0 after -1"])
      expect(started.state).toMatchObject({ written: 3, expanded: true })
    }))
})
