import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { ActorClient } from "../../src/actors/runtime/index.ts"
import { LeaseLost } from "../../src/actors/runtime/leases.ts"
import { AppConfig, type AppSettings } from "../../src/config/AppConfig.ts"
import { type DueRecipient, EmailMessagesRepo } from "../../src/email/EmailMessagesRepo.ts"
import { Identities } from "../../src/email/Identities.ts"
import { MailLedger } from "../../src/email/MailLedger.ts"
import { FLUSH_MAX, MailAccept, MailerKind, MailFeedback, MailFlush, MailRelayed } from "../../src/email/MailerKind.ts"
import { QuotaExceeded } from "../../src/email/model.ts"
import { PartnersRepo } from "../../src/email/PartnersRepo.ts"
import { SuppressionRepo } from "../../src/email/SuppressionRepo.ts"
import { EmailRelay } from "../../src/gateway/EmailRelay.ts"
import type { OutgoingMail, RelayOutcome } from "../../src/gateway/mail.ts"
import { Webhooks } from "../../src/webhooks/Webhooks.ts"
import { applyBehaviour, type BehaviourOptions } from "../support/behaviour.ts"

// The mailer actor's rules (src/email/MailerKind.ts and the ledger it writes through,
// src/email/MailLedger.ts), one command at a time with a recording context: no NATS, no Postgres.
// A send is counted against the partner's 24-hour quota, its rows staged and a flush scheduled; a
// flush marks the due recipients sending in the commit and relays them only after it, at the
// partner's rate; the relay's answers settle each recipient (delivered, hard bounce suppressed,
// deferred retried with backoff, soft bounce after the retries, rejected); feedback on a delivered
// recipient records it and suppresses the address.

const RETRY_BASE_MS = 1_000
type State = typeof MailerKind.state.Type

interface WorldOptions {
  readonly max?: number
  readonly rate?: number
  readonly suppressed?: ReadonlyArray<string>
  readonly out?: number
  readonly due?: ReadonlyArray<DueRecipient>
  readonly pending?: { readonly at: Date | null; readonly outstanding: number }
  readonly sending?: ReadonlyArray<string>
  readonly configSets?: ReadonlyMap<string, string | null>
  readonly recipient?: { readonly status: string; readonly configSetId: string | null }
  readonly relay?: (mail: OutgoingMail) => RelayOutcome
}

const world = (options: WorldOptions = {}) => {
  const calls: Array<string> = []
  const dueLimits: Array<number> = []
  const marked: Array<ReadonlyArray<string>> = []
  const relayed: Array<OutgoingMail> = []
  const emitted: Array<unknown> = []
  const reported = Effect.runSync(Deferred.make<{ key: string; command: MailRelayed }>())
  const messages = {
    outstandingBy: () => Effect.sync(() => (calls.push("outstandingBy"), options.out ?? 0)),
    due: (_partner: string, _process: string, limit: number) => Effect.sync(() => (calls.push("due"), dueLimits.push(limit), options.due ?? [])),
    pending: () => Effect.sync(() => (calls.push("pending"), options.pending)),
    markSending: (due: ReadonlyArray<DueRecipient>) => Effect.sync(() => void marked.push(due.map((r) => `${r.messageId} ${r.recipient}`))),
    configSetsOf: () => Effect.succeed(options.configSets ?? new Map()),
    sendingAmong: () => Effect.succeed(new Set(options.sending ?? [])),
    recipientOf: () => Effect.succeed(options.recipient),
    restatus: (ids: ReadonlyArray<string>) => Effect.sync(() => void calls.push(`restatus ${ids.join(",")}`)),
    insertEventOnce: () => Effect.succeed(true)
  }
  const Stand = Layer.mergeAll(
    Layer.succeed(EmailMessagesRepo, messages as unknown as EmailMessagesRepo),
    Layer.succeed(Webhooks, { emit: (event: unknown) => Effect.sync(() => void emitted.push(event)) } as unknown as Webhooks)
  )
  const layer = Layer.mergeAll(
    Stand,
    MailLedger.DefaultWithoutDependencies.pipe(Layer.provide(Stand)),
    AppConfig.make({ emailRetryBaseMs: RETRY_BASE_MS } as AppSettings),
    Layer.succeed(PartnersRepo, { limits: () => Effect.succeed({ max24HourSend: options.max ?? 100, maxSendRate: options.rate ?? 10 }) } as unknown as PartnersRepo),
    Layer.succeed(SuppressionRepo, { listedAmong: (_p: string, addresses: ReadonlyArray<string>) => Effect.succeed(new Set(addresses.filter((a) => options.suppressed?.includes(a)))) } as unknown as SuppressionRepo),
    Layer.succeed(Identities, {
      dkimKeys: (_p: string, domains: ReadonlyArray<string>) => Effect.succeed(new Map(domains.map((d) => [d, { domainName: d, keySelector: "s1", privateKey: `key-${d}` }])))
    } as unknown as Identities),
    Layer.succeed(EmailRelay, {
      url: "smtp://stand-in",
      send: (mail: OutgoingMail) => Effect.sync(() => (relayed.push(mail), options.relay?.(mail) ?? { _tag: "Accepted", response: "250 ok" }))
    }),
    Layer.succeed(ActorClient, {
      send: (_kind: unknown, key: string, command: MailRelayed) => Deferred.succeed(reported, { key, command })
    } as unknown as ActorClient)
  )
  const partnerId = randomUUID()
  const apply = (state: State, command: typeof MailerKind.command.Type, opts: BehaviourOptions = {}) =>
    Effect.provide(applyBehaviour(MailerKind, state, command, { key: partnerId, ...opts }), layer)
  return { calls, dueLimits, marked, relayed, emitted, reported, partnerId, apply }
}

const initial: State = { flushAt: null, nextSlotAt: 0, window: [], dirty: false }
const accept = (recipients: ReadonlyArray<string>, messageId: string = randomUUID()) =>
  new MailAccept({
    messageId, from: "news@shop.test", to: recipients, cc: [], bcc: [], replyTo: [], subject: "Hi", text: "hello", html: null,
    configSetId: null, tags: null, recipients
  })
const dueRow = (messageId: string, recipient: string, from = "news@shop.test", attempts = 0): DueRecipient => ({
  messageId, recipient, attempts, fromAddress: from, toAddresses: [recipient], ccAddresses: [], replyTo: [], subject: "Hi", textBody: "hello", htmlBody: null
})
const atOf = (timer: { when: unknown }) => (timer.when as { at: Date }).at.getTime()

describe("mailer rules", () => {
  it.effect("an accepted send stages its message and recipients, records SEND, answers QUEUED and schedules a flush", () =>
    Effect.gen(function*() {
      const w = world()
      const before = Date.now()
      const { state, recorded } = yield* w.apply(initial, accept(["a@x.test", "b@x.test"], "m1"))
      expect(recorded.inserts.map((i) => [i.table, i.row.status ?? i.row.type])).toEqual([
        ["email_messages", "QUEUED"], ["email_recipients", "queued"], ["email_recipients", "queued"], ["email_events", "SEND"]
      ])
      expect(recorded.replies.map((r) => r.value)).toEqual([{ status: "QUEUED" }])
      expect(recorded.timers.map((t) => [t.command, t.id])).toEqual([[new MailFlush(), "flush"]])
      expect(atOf(recorded.timers[0]!)).toBeGreaterThanOrEqual(before)
      expect(state.dirty).toBe(true)
      expect(state.window.reduce((n, [, c]) => n + c, 0)).toBe(2)
    }))

  it.effect("a flush already due sooner is not put off; one set for the rate's next slot is", () =>
    Effect.gen(function*() {
      const w = world()
      const soon = yield* w.apply({ ...initial, flushAt: Date.now() - 1 }, accept(["a@x.test"]))
      expect(soon.recorded.timers).toEqual([])
      const slot = Date.now() + 5_000
      const later = yield* w.apply({ ...initial, flushAt: slot + 10_000, nextSlotAt: slot }, accept(["a@x.test"]))
      expect(later.recorded.timers.map(atOf)).toEqual([slot])
      expect(later.state.flushAt).toBe(slot)
    }))

  it.effect("suppressed recipients are staged suppressed; with none left the send is SUPPRESSED, REJECTed and not flushed", () =>
    Effect.gen(function*() {
      const some = yield* world({ suppressed: ["b@x.test"] }).apply(initial, accept(["a@x.test", "b@x.test"]))
      expect(some.recorded.inserts.filter((i) => i.table === "email_recipients").map((i) => [i.row.recipient, i.row.status])).toEqual([["a@x.test", "queued"], ["b@x.test", "suppressed"]])
      expect(some.recorded.inserts.filter((i) => i.table === "email_events").map((i) => [i.row.type, i.row.recipient])).toEqual([["SEND", null], ["SUPPRESSED", "b@x.test"]])
      const none = yield* world({ suppressed: ["b@x.test"] }).apply(initial, accept(["b@x.test"]))
      expect(none.recorded.inserts.filter((i) => i.table === "email_events").map((i) => i.row.type)).toEqual(["SUPPRESSED", "REJECT"])
      expect(none.recorded.replies.map((r) => r.value)).toEqual([{ status: "SUPPRESSED" }])
      expect(none.recorded.timers).toEqual([])
      expect(none.state.window.reduce((n, [, c]) => n + c, 0)).toBe(1)
    }))

  it.effect("a send that would cross the 24-hour quota fails with QuotaExceeded and writes nothing", () =>
    Effect.gen(function*() {
      const w = world({ max: 3 })
      const minute = Math.floor(Date.now() / 60_000)
      const state: State = { ...initial, window: [[minute - 24 * 60, 50], [minute, 2]] }
      const { state: next, recorded } = yield* w.apply(state, accept(["a@x.test", "b@x.test"]))
      expect(recorded.failures.map((f) => f.error)).toEqual([expect.any(QuotaExceeded)])
      expect(recorded.inserts).toEqual([])
      expect(recorded.replies).toEqual([])
      expect(next).toEqual(state)
      // The minute a day ago is out of the window: one more recipient still fits.
      const fits = yield* w.apply(state, accept(["a@x.test"]))
      expect(fits.recorded.failures).toEqual([])
    }))

  it.effect("a flush before the rate's next slot reads nothing and waits for the slot", () =>
    Effect.gen(function*() {
      const w = world({ due: [dueRow("m1", "a@x.test")] })
      const slot = Date.now() + 3_000
      const { state, recorded } = yield* w.apply({ ...initial, flushAt: slot, nextSlotAt: slot, dirty: true }, new MailFlush())
      expect(w.calls).toEqual([])
      expect(recorded.timers.map(atOf)).toEqual([slot])
      expect(state).toMatchObject({ flushAt: slot, dirty: false })
    }))

  it.effect("a flush marks the due recipients sending in the commit and relays them only after it, then reports the outcomes", () =>
    Effect.gen(function*() {
      const w = world({
        rate: 2,
        due: [dueRow("m1", "a@x.test", "news@shop.test", 0), dueRow("m2", "b@y.test", "hi@other.test", 2)],
        relay: (mail) => mail.recipient === "a@x.test" ? { _tag: "Accepted", response: "250 ok" } : { _tag: "Deferred", code: 451, response: "451 later" }
      })
      const before = Date.now()
      const { state, recorded } = yield* w.apply({ ...initial, flushAt: before }, new MailFlush())
      expect(w.dueLimits).toEqual([2])
      expect(w.relayed).toEqual([])
      expect(recorded.persisted).toHaveLength(1)
      for (const write of recorded.persisted) yield* (write as unknown as Effect.Effect<void>)
      expect(w.marked).toEqual([["m1 a@x.test", "m2 b@y.test"]])
      // Two recipients at 2 a second: the next slot is a second on, and the next flush then.
      expect(state.nextSlotAt - before).toBeGreaterThanOrEqual(1_000)
      expect(state.nextSlotAt - Date.now()).toBeLessThanOrEqual(1_000)
      expect(recorded.timers.map(atOf)).toEqual([state.nextSlotAt])
      expect(recorded.afterCommit).toHaveLength(1)
      for (const work of recorded.afterCommit) yield* work
      const { key, command } = yield* Deferred.await(w.reported)
      expect(w.relayed.map((m) => [m.recipient, m.dkim?.privateKey])).toEqual([["a@x.test", "key-shop.test"], ["b@y.test", "key-other.test"]])
      expect(key).toBe(w.partnerId)
      expect(command.outcomes.map((o) => [o.messageId, o.recipient, o.attempts, o.tag])).toEqual([["m1", "a@x.test", 1, "Accepted"], ["m2", "b@y.test", 3, "Deferred"]])
    }))

  it.live("a flush whose node lost the partition's lease relays nothing and reports nothing", () =>
    Effect.gen(function*() {
      const w = world({ due: [dueRow("m1", "a@x.test")] })
      const lease = { kind: "mailer", partition: 0, fresh: () => false, current: Effect.fail(new LeaseLost({ key: "mailer.0", message: "lost" })) }
      const { recorded } = yield* w.apply(initial, new MailFlush(), { lease })
      for (const work of recorded.afterCommit) yield* work
      yield* Effect.sleep("50 millis")
      expect(w.relayed).toEqual([])
      expect(yield* Deferred.isDone(w.reported)).toBe(false)
    }))

  it.effect("a flush hands the relay at most the rate, FLUSH_MAX, and what the out-bound leaves; none when it is full", () =>
    Effect.gen(function*() {
      const fast = world({ rate: 10_000, out: 0 })
      yield* fast.apply(initial, new MailFlush())
      expect(fast.dueLimits).toEqual([FLUSH_MAX])
      const busy = world({ rate: 10_000, out: FLUSH_MAX * 4 - 5 })
      yield* busy.apply(initial, new MailFlush())
      expect(busy.dueLimits).toEqual([5])
      const full = world({ rate: 10_000, out: FLUSH_MAX * 4 })
      const before = Date.now()
      const { recorded } = yield* full.apply(initial, new MailFlush())
      expect(full.calls).toEqual(["outstandingBy"])
      expect(atOf(recorded.timers[0]!) - before).toBeGreaterThanOrEqual(1_000)
    }))

  it.effect("nothing due: looks again shortly when dirty, at the next retry (at most a second on) while any is pending, not at all when none is", () =>
    Effect.gen(function*() {
      const dirty = yield* world().apply({ ...initial, dirty: true }, new MailFlush())
      const t = Date.now()
      expect(atOf(dirty.recorded.timers[0]!) - t).toBeLessThanOrEqual(20)
      const retryAt = Date.now() + 400
      const waiting = world({ pending: { at: new Date(retryAt), outstanding: 1 } })
      const soon = yield* waiting.apply(initial, new MailFlush())
      expect(soon.recorded.timers.map(atOf)).toEqual([retryAt])
      const far = yield* world({ pending: { at: new Date(Date.now() + 60_000), outstanding: 1 } }).apply(initial, new MailFlush())
      expect(atOf(far.recorded.timers[0]!) - Date.now()).toBeLessThanOrEqual(1_000)
      const idle = yield* world({ pending: { at: null, outstanding: 0 } }).apply({ ...initial, flushAt: 1 }, new MailFlush())
      expect(idle.recorded.timers).toEqual([])
      expect(idle.state.flushAt).toBeNull()
    }))

  it.effect("relayed answers: delivered, hard bounce suppressed, deferred retried with backoff, soft bounce after the retries, rejected; settled ones skipped", () =>
    Effect.gen(function*() {
      const w = world({ sending: ["m1 a@x.test", "m1 b@x.test", "m1 c@x.test", "m2 d@x.test", "m2 e@x.test"] })
      const outcome = (messageId: string, recipient: string, attempts: number, tag: "Accepted" | "Bounced" | "Deferred" | "Rejected") =>
        ({ messageId, recipient, attempts, tag, response: `${tag} answer` })
      const before = Date.now()
      const { state, recorded } = yield* w.apply(initial, new MailRelayed({
        outcomes: [
          outcome("m1", "a@x.test", 1, "Accepted"),
          outcome("m1", "b@x.test", 1, "Bounced"),
          outcome("m1", "c@x.test", 2, "Deferred"),
          outcome("m2", "d@x.test", 4, "Deferred"),
          outcome("m2", "e@x.test", 1, "Rejected"),
          outcome("m2", "late@x.test", 1, "Accepted")
        ]
      }))
      expect(recorded.updates.map((u) => [u.row.recipient, u.row.status])).toEqual([
        ["a@x.test", "delivered"], ["b@x.test", "bounced"], ["c@x.test", "queued"], ["d@x.test", "bounced"], ["e@x.test", "rejected"]
      ])
      const retry = new Date(recorded.updates[2]!.row.next_attempt_at as string).getTime() - before
      expect(retry).toBeGreaterThanOrEqual(RETRY_BASE_MS * 3)
      expect(retry).toBeLessThan(RETRY_BASE_MS * 9)
      expect(recorded.inserts.filter((i) => i.table === "email_suppression").map((i) => [i.row.email, i.row.reason])).toEqual([["b@x.test", "BOUNCE"]])
      expect(recorded.inserts.filter((i) => i.table === "email_events").map((i) => [i.row.recipient, i.row.type, i.row.detail])).toEqual([
        ["a@x.test", "DELIVERY", "Accepted answer"], ["b@x.test", "BOUNCE", "hard: Bounced answer"], ["d@x.test", "BOUNCE", "soft"], ["e@x.test", "REJECT", "Rejected answer"]
      ])
      for (const write of recorded.persisted) yield* (write as unknown as Effect.Effect<void>)
      expect(w.calls).toEqual(["restatus m1,m2"])
      expect(state.dirty).toBe(true)
      expect(recorded.timers.map((t) => t.command)).toEqual([new MailFlush()])
    }))

  it.effect("with a configuration set, an event is inserted once and only then sent to its destinations", () =>
    Effect.gen(function*() {
      const w = world({ sending: ["m1 a@x.test"], configSets: new Map([["m1", "cs1"]]) })
      const { recorded } = yield* w.apply(initial, new MailRelayed({ outcomes: [{ messageId: "m1", recipient: "a@x.test", attempts: 1, tag: "Accepted", response: "250" }] }))
      expect(recorded.inserts.filter((i) => i.table === "email_events")).toEqual([])
      expect(w.emitted).toEqual([])
      for (const write of recorded.persisted) yield* (write as unknown as Effect.Effect<void>)
      expect(w.emitted).toEqual([expect.objectContaining({ accountId: w.partnerId, configSetId: "cs1" })])
    }))

  it.effect("feedback on a delivered recipient records it and suppresses the address; on any other, nothing", () =>
    Effect.gen(function*() {
      const w = world({ recipient: { status: "delivered", configSetId: null } })
      const { state, recorded } = yield* w.apply(initial, new MailFeedback({ messageId: "m1", recipient: "a@x.test", type: "complaint", detail: "abuse" }))
      expect(recorded.updates.map((u) => [u.row.recipient, u.row.status])).toEqual([["a@x.test", "complained"]])
      expect(recorded.inserts.map((i) => [i.table, i.row.reason ?? i.row.type])).toEqual([["email_suppression", "COMPLAINT"], ["email_events", "COMPLAINT"]])
      expect(state).toEqual(initial)
      const bounce = yield* w.apply(initial, new MailFeedback({ messageId: "m1", recipient: "a@x.test", type: "bounce", detail: "550 gone" }))
      expect(bounce.recorded.inserts.map((i) => [i.table, i.row.reason ?? i.row.detail])).toEqual([["email_suppression", "BOUNCE"], ["email_events", "hard: 550 gone"]])
      const again = yield* world({ recipient: { status: "complained", configSetId: null } }).apply(initial, new MailFeedback({ messageId: "m1", recipient: "a@x.test", type: "complaint", detail: "abuse" }))
      expect(again.recorded.updates).toEqual([])
      expect(again.recorded.inserts).toEqual([])
      expect(again.recorded.persisted).toEqual([])
    }))
})
