import { Duration, Effect, Schema } from "effect"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import { ActorKind } from "../actors/runtime/index.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { BroadcastsRepo, type Counters } from "./BroadcastsRepo.ts"
import { BroadcastTargets } from "./BroadcastTargets.ts"
import { liveSubject } from "../live/liveSubjects.ts"
import { progressOf } from "./progress.ts"
import { CHUNK_TARGETS, CHUNK_WINDOW, chunkRange, EXPAND_BATCH } from "./chunking.ts"
import { BroadcastAddress, ChunkDone, SendChunk, SenderAddress, WaSenderChunkAddress } from "../messaging/chunkProtocol.ts"
import { audienceCondition } from "./BroadcastTargets.ts"

/** Before every customer_id: where a campaign's expansion starts. */
const FIRST_CUSTOMER = "00000000-0000-0000-0000-000000000000"
/** Before every target_no: where a retry's expansion starts. */
const BEFORE_TARGETS = "-1"


/** Begin (from the API's outbox row, or the timer of a scheduled broadcast). */
export class Start extends Schema.TaggedClass<Start>()("Start", {}) {}
/** Write the next batch of targets. */
export class Expand extends Schema.TaggedClass<Expand>()("Expand", {}) {}
/** Stop sending (the API marked the broadcast cancelled). */
export class Cancel extends Schema.TaggedClass<Cancel>()("Cancel", {}) {}

export const BroadcastCommand = Schema.Union(Start, Expand, ChunkDone, Cancel)
export type BroadcastCommand = typeof BroadcastCommand.Type

const BroadcastState = Schema.Struct({
  phase: Schema.Literal("new", "waiting", "running", "finished"),
  accountId: Schema.String,
  /** rcs: a bot's broadcast to a contact list; whatsapp: a number's campaign to customers (docs/campaigns.md). */
  channel: Schema.optionalWith(Schema.Literal("rcs", "whatsapp"), { default: () => "rcs" as const }),
  /** The actor that sends the chunks: the bot's `sender`, or the number's `wa_sender` (its phone_number_id). */
  botId: Schema.String,
  listId: Schema.String,
  /**
   * What freezes the recipients when the broadcast started: the list's last contact_id (later
   * imports are not sent to), or for a campaign the instant its audience was counted (customers
   * recorded later are not sent to).
   */
  upto: Schema.String,
  total: Schema.Int,
  /** Targets written so far, and the last contact they came from. */
  written: Schema.Int,
  after: Schema.String,
  expanded: Schema.Boolean,
  /** Chunks handed to the sender so far (numbers below this), and those not done yet. */
  handedOut: Schema.Int,
  outstanding: Schema.Array(Schema.Int),
  cancelled: Schema.Boolean
})
type BroadcastState = typeof BroadcastState.Type

/** The broadcast's own address, for the commands it tells itself (the next expansion step). */
const Self = ActorKind.address(BroadcastAddress.name, BroadcastCommand)

/** What every handler of the broadcast works with: its services, and the steps its rules share. */
const broadcastTools = (ctx: ActorContext<BroadcastCommand>) =>
  Effect.gen(function*() {
    const repo = yield* BroadcastsRepo
    const targets = yield* BroadcastTargets
    const webhooks = yield* Webhooks
    const config = yield* AppConfig
    const broadcastId = ctx.key

    const publishProgress = (accountId: string, counters: Counters) => ctx.notify(liveSubject(config.natsPrefix, accountId, "broadcast_progress"), progressOf(broadcastId, counters))

    const handOut = (s: BroadcastState): BroadcastState => {
      let handedOut = s.handedOut
      const outstanding = [...s.outstanding]
      while (!s.cancelled && outstanding.length < CHUNK_WINDOW) {
        const { first, last } = chunkRange(handedOut, s.written)
        if (first >= s.written || (last - first + 1 < CHUNK_TARGETS && !s.expanded)) break
        ctx.send(
          s.channel === "whatsapp" ? WaSenderChunkAddress : SenderAddress,
          s.botId,
          new SendChunk({ order: { broadcastId, accountId: s.accountId, chunkNo: handedOut, first, last } }),
          { msgId: `chunk-${broadcastId}-${handedOut}` }
        )
        outstanding.push(handedOut)
        handedOut++
      }
      return { ...s, handedOut, outstanding }
    }

    const finishIfDone = (s: BroadcastState) =>
      Effect.gen(function*() {
        if (s.phase !== "running" || s.outstanding.length > 0) return s
        if (!s.cancelled && (!s.expanded || s.handedOut * CHUNK_TARGETS < s.written)) return s
        const counters = yield* repo.counters(broadcastId)
        // A cancel is committed by the API before its command reaches this actor, and the
        // chunks, which read the status, may all end first: such a broadcast is cancelled, not
        // completed. The event goes only with the update that completes it (the row is locked
        // by then, so a cancel committing meanwhile is refused), never for a cancelled one.
        if (counters !== undefined && !s.cancelled && counters.status === "running") {
          const final = { ...counters, status: "completed" as const }
          ctx.persist(
            repo.markCompleted(broadcastId).pipe(
              Effect.flatMap((completed) =>
                completed
                  ? webhooks.emit(
                    s.channel === "whatsapp"
                      ? { accountId: s.accountId, type: "broadcast.completed", botId: null, channel: "whatsapp", data: progressOf(broadcastId, final) }
                      : { accountId: s.accountId, type: "broadcast.completed", botId: s.botId, data: progressOf(broadcastId, final) }
                  )
                  : Effect.void
              ),
              Effect.asVoid,
              Effect.catchTag("NatsUnavailable", Effect.die)
            )
          )
          publishProgress(s.accountId, final)
        } else if (counters !== undefined) publishProgress(s.accountId, counters)
        return { ...s, phase: "finished" as const }
      })

    const expandStep = (s: BroadcastState) =>
      Effect.gen(function*() {
        const source = yield* sourceOf(s)
        const step = { broadcastId, after: s.after, upto: s.upto, firstNo: s.written, limit: EXPAND_BATCH }
        const batch = source.kind === "list"
          ? yield* targets.expand({ ...step, listId: s.listId })
          : source.kind === "retry"
          ? yield* targets.expandRetry({ ...step, sourceId: source.of })
          : yield* targets.expandAudience({ ...step, accountId: s.accountId, audience: source.audience, traits: source.traits })
        const campaign = source.kind === "audience" ? source : undefined
        const written = s.written + batch.read
        // A campaign's audience was counted at its start; customers whose traits changed since may
        // have come in or gone out, so it is written until a batch comes back short, and its total
        // is what was written.
        const expanded = batch.read < EXPAND_BATCH || (campaign === undefined && written >= s.total)
        if (campaign !== undefined && expanded) ctx.persist(repo.setTotal(broadcastId, written).pipe(Effect.asVoid))
        if (!expanded) ctx.send(Self, broadcastId, new Expand(), { msgId: `expand-${broadcastId}-${written}` })
        return yield* finishIfDone(handOut({ ...s, written, after: batch.last ?? s.after, expanded }))
      })

    /**
     * What the targets are written from: an RCS broadcast's list, a campaign's audience (and the
     * traits its values name), or for a retry the targets of the broadcast it retries.
     */
    const sourceOf = (s: BroadcastState) =>
      Effect.gen(function*() {
        const header = yield* repo.header(broadcastId)
        const audience = header?.audience ?? null
        if (audience?.kind === "retry") return { kind: "retry" as const, of: audience.of }
        if (audience === null || s.channel !== "whatsapp") return { kind: "list" as const }
        return { kind: "audience" as const, audience: audienceCondition(audience), traits: header!.variables === null ? null : Object.keys(header!.variables) }
      })

    return { repo, targets, broadcastId, handOut, finishIfDone, expandStep } as const
  })

/**
 * `broadcast`: one actor per broadcast (key = broadcast_id). It writes the targets from the list
 * in batches, hands them to the bot's sender actor a chunk at a time with a bounded window, and
 * once every target has an outcome marks the broadcast completed and emits broadcast.completed —
 * once, with the state change that records it. Counters are not kept here but by the statements
 * that record outcomes, so they are exact whatever is delivered twice.
 */
export const BroadcastKind = ActorKind.make(BroadcastAddress.name, {
  command: BroadcastCommand,
  state: BroadcastState,
  initial: (): BroadcastState => ({
    phase: "new",
    accountId: "",
    channel: "rcs",
    botId: "",
    listId: "",
    upto: "0",
    total: 0,
    written: 0,
    after: "0",
    expanded: false,
    handedOut: 0,
    outstanding: [],
    cancelled: false
  }),
  passivateAfter: Duration.minutes(1),
  handlers: {
    Start: (state, _command, ctx) =>
      Effect.gen(function*() {
        const { repo, targets, broadcastId, expandStep } = yield* broadcastTools(ctx)
        if (state.phase !== "new" && state.phase !== "waiting") return state
        const header = yield* repo.header(broadcastId)
        if (header === undefined || header.status === "cancelled") return { ...state, phase: "finished" as const }
        const retry = header.audience?.kind === "retry" ? header.audience : undefined
        const base = header.channel === "whatsapp"
          ? { ...state, channel: "whatsapp" as const, accountId: header.accountId, botId: header.phoneNumberId ?? "", listId: "", after: retry ? BEFORE_TARGETS : FIRST_CUSTOMER }
          : { ...state, accountId: header.accountId, botId: header.botId ?? "", listId: header.listId ?? "", after: retry ? BEFORE_TARGETS : state.after }
        if (header.scheduledAt !== null && header.scheduledAt.getTime() > Date.now()) {
          ctx.schedule(new Start(), { at: header.scheduledAt }, "start")
          return { ...base, phase: "waiting" as const }
        }
        const snapshot = retry !== undefined
          ? yield* targets.snapshotRetry(retry.of)
          : header.channel === "whatsapp" && header.audience !== null && header.audience.kind !== "retry"
          ? yield* targets.snapshotAudience(header.accountId, audienceCondition(header.audience))
          : yield* targets.snapshotList(header.listId ?? "")
        if (snapshot === "Busy") {
          // An import into the list is running: its rows are not all there yet.
          ctx.schedule(new Start(), { after: Duration.seconds(1) }, "start")
          return { ...base, phase: "waiting" as const }
        }
        ctx.persist(repo.markRunning(broadcastId, snapshot.total).pipe(Effect.asVoid))
        return yield* expandStep({ ...base, phase: "running", upto: snapshot.upto, total: snapshot.total, expanded: snapshot.total === 0 })
      }),
    Expand: (state, _command, ctx) =>
      Effect.gen(function*() {
        const { expandStep } = yield* broadcastTools(ctx)
        if (state.phase !== "running" || state.cancelled || state.expanded) return state
        return yield* expandStep(state)
      }),
    ChunkDone: (state, command, ctx) =>
      Effect.gen(function*() {
        const { handOut, finishIfDone } = yield* broadcastTools(ctx)
        if (!state.outstanding.includes(command.chunkNo)) return state
        return yield* finishIfDone(handOut({ ...state, outstanding: state.outstanding.filter((n) => n !== command.chunkNo) }))
      }),
    Cancel: (state, _command, ctx) =>
      Effect.gen(function*() {
        const { targets, broadcastId, finishIfDone } = yield* broadcastTools(ctx)
        if (state.phase === "finished" || state.cancelled) return state
        ctx.cancelTimer("start")
        if (state.phase !== "running") return { ...state, cancelled: true, phase: "finished" as const }
        // Targets not handed out are cancelled here, contacts never written as targets are
        // counted as cancelled too; chunks out with the sender cancel what they have not sent.
        const neverWritten = state.expanded ? 0 : state.total - state.written
        ctx.persist(targets.cancelPending(broadcastId, state.handedOut * CHUNK_TARGETS, null, neverWritten))
        return yield* finishIfDone({ ...state, cancelled: true, expanded: true })
      })
  }
})
