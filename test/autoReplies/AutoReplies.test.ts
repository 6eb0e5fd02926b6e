import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { randomUUID } from "node:crypto"
import { ActorClient, Outbox } from "../../src/actors/runtime/index.ts"
import { AutoReplies, type RuleInput } from "../../src/autoReplies/AutoReplies.ts"
import { NatsLive } from "../../src/bus/Nats.ts"
import type { Email } from "../../src/domain/identity.ts"
import type { GatewayReport } from "../../src/gateway/rcs.ts"
import { AccountsRepo } from "../../src/accounts/AccountsRepo.ts"
import { type BotRow, BotsRepo } from "../../src/bots/BotsRepo.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { TemplatesRepo } from "../../src/templates/TemplatesRepo.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"
import { signedIn } from "../support/principals.ts"

// The firing side of auto-replies in process, against a real database and the real outbox: what
// one inbound message writes, and that concurrent callbacks never fire a rule twice inside its
// cooldown. The HTTP side and the actual send through the gateway are in test/e2e/auto-replies.test.ts.

const Env = Layer.mergeAll(AutoReplies.Default, AccountsRepo.Default, BotsRepo.Default, TemplatesRepo.Default).pipe(
  Layer.provideMerge(Outbox.Default),
  Layer.provideMerge(ActorClient.Default),
  Layer.provideMerge(Layer.mergeAll(NatsLive, Storage.Default)),
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(TestConfig({ messagePrice: 0.1 })),
  Layer.provideMerge(IsolationLive)
)

type Inbound = Extract<GatewayReport, { _tag: "Inbound" }>

const inbound = (bot: BotRow, phone: string, text: string, messageId = `up-${randomUUID()}`): Inbound => ({
  _tag: "Inbound",
  messageId,
  agentId: bot.botId,
  phone,
  text,
  at: Date.now()
})

const rule = (overrides: Partial<RuleInput> = {}): RuleInput => ({
  match: "exact",
  keyword: "hours",
  reply: { text: "We are open 9 to 5." },
  cooldownSeconds: 3600,
  active: true,
  ...overrides
})

/** An account with `balance` in its wallet and an active bot. */
const setup = (balance = "10") =>
  Effect.gen(function*() {
    yield* (yield* Storage).awaitReady
    const accounts = yield* AccountsRepo
    const email = `ar${randomUUID().slice(0, 8)}@example.com` as Email
    const { accountId } = yield* accounts.createWithOwner({ email, passwordHash: "x", label: "AR", plan: "growth" })
    if (Number(balance) > 0) yield* accounts.credit(accountId, balance)
    const bot = yield* (yield* BotsRepo).create({ accountId, name: "Bot", useCase: null, status: "active" })
    return { accountId, bot, owner: signedIn(accountId) }
  })

const firesOf = (botId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ ruleId: string; recipient: string; inboundText: string; inboundId: string; messageId: string }>`
      SELECT rule_id, recipient, inbound_text, inbound_id, message_id FROM auto_reply_fires WHERE bot_id = ${botId}::uuid ORDER BY fired_at`)

const outboxOf = (messageIds: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ msgId: string; subject: string; payload: any }>`
      SELECT msg_id, subject, payload FROM actor_outbox WHERE msg_id = ANY(${messageIds.map((id) => `send-${id}`)}::text[])`)

layer(Env, { timeout: 60_000, excludeTestServices: true })("auto-replies firing", (it) => {
  it.effect("a match records the firing and queues the reply for the bot's sender actor in the outbox", () =>
    Effect.gen(function*() {
      const { accountId, bot, owner } = yield* setup()
      const autoReplies = yield* AutoReplies
      const created = yield* autoReplies.create(owner, bot.botId, rule())
      const report = inbound(bot, "+919876500011", "  HOURS ")
      yield* autoReplies.onInbound(bot, report)
      const fires = yield* firesOf(bot.botId)
      expect(fires).toEqual([{ ruleId: created.ruleId, recipient: "+919876500011", inboundText: "  HOURS ", inboundId: report.messageId, messageId: expect.any(String) }])
      const [queued] = yield* outboxOf([fires[0]!.messageId])
      expect(queued!.subject).toContain(`.sender.`)
      expect(queued!.subject.endsWith(`.${bot.botId}`)).toBe(true)
      expect(queued!.payload).toEqual({
        _tag: "Send",
        message: { messageId: fires[0]!.messageId, accountId, to: "+919876500011", content: { type: "text", text: "We are open 9 to 5.", suggestions: [] } },
        templateId: null,
        source: "auto_reply",
        price: 0.1,
        replyTo: null
      })
      // No match, nothing.
      yield* autoReplies.onInbound(bot, inbound(bot, "+919876500011", "opening hours"))
      expect(yield* firesOf(bot.botId)).toHaveLength(1)
    }))

  it.effect("concurrent messages from one sender fire a rule once per cooldown; each other sender once too", () =>
    Effect.gen(function*() {
      const { bot, owner } = yield* setup()
      const autoReplies = yield* AutoReplies
      yield* autoReplies.create(owner, bot.botId, rule({ match: "contains", keyword: "price" }))
      const senders = ["+919876500021", "+919876500022", "+919876500023"]
      yield* Effect.forEach(
        Array.from({ length: 30 }, (_, i) => inbound(bot, senders[i % senders.length]!, `price ${i}?`)),
        (report) => autoReplies.onInbound(bot, report),
        { concurrency: "unbounded" }
      )
      const fires = yield* firesOf(bot.botId)
      expect(fires.map((f) => f.recipient).sort()).toEqual(senders)
      expect(yield* outboxOf(fires.map((f) => f.messageId))).toHaveLength(3)
    }))

  it.effect("the cooldown runs per rule and recipient: after it, the rule fires again; 0 means every message", () =>
    Effect.gen(function*() {
      const { bot, owner } = yield* setup()
      const sql = yield* SqlClient.SqlClient
      const autoReplies = yield* AutoReplies
      const hourly = yield* autoReplies.create(owner, bot.botId, rule({ keyword: "hi", cooldownSeconds: 3600 }))
      const always = yield* autoReplies.create(owner, bot.botId, rule({ keyword: "menu", cooldownSeconds: 0 }))
      const fire = (text: string) => autoReplies.onInbound(bot, inbound(bot, "+919876500031", text))
      yield* fire("hi")
      yield* fire("hi")
      expect(yield* firesOf(bot.botId)).toHaveLength(1)
      // An hour later (moved back in the table), it fires again.
      yield* sql`UPDATE auto_reply_cooldowns SET last_fired_at = last_fired_at - interval '3600 seconds' WHERE rule_id = ${hourly.ruleId}::uuid`
      yield* fire("hi")
      expect(yield* firesOf(bot.botId)).toHaveLength(2)
      // A minute short of the hour, it does not.
      yield* sql`UPDATE auto_reply_cooldowns SET last_fired_at = last_fired_at - interval '3540 seconds' WHERE rule_id = ${hourly.ruleId}::uuid`
      yield* fire("hi")
      expect(yield* firesOf(bot.botId)).toHaveLength(2)
      yield* Effect.forEach([1, 2, 3], () => fire("menu"), { concurrency: "unbounded" })
      const fires = yield* firesOf(bot.botId)
      expect(fires.filter((f) => f.ruleId === always.ruleId)).toHaveLength(3)
    }))

  it.effect("a repeated callback of one inbound message fires nothing more, even without a cooldown", () =>
    Effect.gen(function*() {
      const { bot, owner } = yield* setup()
      const autoReplies = yield* AutoReplies
      yield* autoReplies.create(owner, bot.botId, rule({ cooldownSeconds: 0 }))
      const report = inbound(bot, "+919876500041", "hours")
      yield* Effect.forEach([1, 2, 3], () => autoReplies.onInbound(bot, report), { concurrency: "unbounded" })
      yield* autoReplies.onInbound(bot, report)
      expect(yield* firesOf(bot.botId)).toHaveLength(1)
    }))

  it.effect("exact rules win over contains rules created earlier; an inactive rule is skipped", () =>
    Effect.gen(function*() {
      const { bot, owner } = yield* setup()
      const autoReplies = yield* AutoReplies
      const catchAll = yield* autoReplies.create(owner, bot.botId, rule({ match: "contains", keyword: "order" }))
      yield* autoReplies.create(owner, bot.botId, rule({ keyword: "order status", active: false }))
      const exact = yield* autoReplies.create(owner, bot.botId, rule({ keyword: "Order Status" }))
      yield* autoReplies.onInbound(bot, inbound(bot, "+919876500051", "order status"))
      yield* autoReplies.onInbound(bot, inbound(bot, "+919876500052", "where is my order"))
      const fires = yield* firesOf(bot.botId)
      expect(fires.map((f) => [f.recipient, f.ruleId])).toEqual([["+919876500051", exact.ruleId], ["+919876500052", catchAll.ruleId]])
      // Deactivated: its sender is answered by the next rule in order, the catch-all.
      yield* autoReplies.update(owner, bot.botId, exact.ruleId, { active: false })
      yield* autoReplies.onInbound(bot, inbound(bot, "+919876500053", "order status"))
      expect((yield* firesOf(bot.botId))[2]!.ruleId).toBe(catchAll.ruleId)
    }))

  it.effect("a template reply sends the template's content with its id; a template deleted since fires nothing", () =>
    Effect.gen(function*() {
      const { accountId, bot, owner } = yield* setup()
      const autoReplies = yield* AutoReplies
      const templates = yield* TemplatesRepo
      const content = { type: "rich_card" as const, rich_card: { title: "Menu", description: "Pizza, pasta" }, suggestions: [] }
      const template = yield* templates.insert({ accountId, botId: bot.botId, name: "menu", content, status: "approved", warnings: [] })
      if (template === "NameTaken") throw new Error("unexpected")
      yield* autoReplies.create(owner, bot.botId, rule({ keyword: "menu", reply: { template_id: template.templateId } }))
      yield* autoReplies.onInbound(bot, inbound(bot, "+919876500061", "Menu"))
      const fires = yield* firesOf(bot.botId)
      const [queued] = yield* outboxOf([fires[0]!.messageId])
      expect(queued!.payload).toMatchObject({ templateId: template.templateId, message: { content } })
      yield* templates.remove(accountId, template.templateId)
      yield* autoReplies.onInbound(bot, inbound(bot, "+919876500062", "menu"))
      expect(yield* firesOf(bot.botId)).toHaveLength(1)
    }))

  it.effect("nothing fires for a bot that is not active, nor when the wallet cannot pay; no cooldown is spent then", () =>
    Effect.gen(function*() {
      const { accountId, bot, owner } = yield* setup("0.05")
      const autoReplies = yield* AutoReplies
      const sql = yield* SqlClient.SqlClient
      yield* autoReplies.create(owner, bot.botId, rule())
      yield* autoReplies.onInbound({ ...bot, status: "suspended" }, inbound(bot, "+919876500071", "hours"))
      yield* autoReplies.onInbound(bot, inbound(bot, "+919876500071", "hours"))
      expect(yield* firesOf(bot.botId)).toHaveLength(0)
      expect(yield* sql`SELECT 1 FROM auto_reply_cooldowns WHERE recipient = '+919876500071'`).toHaveLength(0)
      // Topped up: the same sender's next message is answered.
      yield* (yield* AccountsRepo).credit(accountId, "1")
      yield* autoReplies.onInbound(bot, inbound(bot, "+919876500071", "hours"))
      expect(yield* firesOf(bot.botId)).toHaveLength(1)
    }))

  it.effect("a bot keeps at most 500 rules: the next one is a conflict naming bot_id", () =>
    Effect.gen(function*() {
      const { accountId, bot, owner } = yield* setup()
      const sql = yield* SqlClient.SqlClient
      const autoReplies = yield* AutoReplies
      yield* sql`
        INSERT INTO auto_reply_rules (account_id, bot_id, match, keyword, reply_text, cooldown_seconds)
        SELECT ${accountId}::uuid, ${bot.botId}::uuid, 'exact', 'k' || i, 'r', 60 FROM generate_series(1, 499) AS i`
      yield* autoReplies.create(owner, bot.botId, rule())
      const error = yield* Effect.flip(autoReplies.create(owner, bot.botId, rule()))
      expect(error).toMatchObject({ _tag: "Conflict", key: "bot_id", message: "a bot has at most 500 auto-reply rules" })
      expect((yield* autoReplies.list(owner, bot.botId))).toHaveLength(500)
    }))

  it.effect("never fails: a write the database refuses is logged and the callback goes on", () =>
    Effect.gen(function*() {
      const { bot, owner } = yield* setup()
      const autoReplies = yield* AutoReplies
      yield* autoReplies.create(owner, bot.botId, rule({ match: "contains" }))
      // Postgres text cannot hold NUL: the fire row's insert fails.
      const logged: Array<string> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ logLevel, message }) => void logged.push(`${logLevel.label} ${String(Array.isArray(message) ? message[0] : message)}`))
      )
      const exit = yield* Effect.exit(autoReplies.onInbound(bot, inbound(bot, "+919876500081", "hours\u0000")).pipe(Effect.provide(capture)))
      expect(exit._tag).toBe("Success")
      expect(logged).toContain("ERROR auto-reply failed; the inbound message is recorded, no reply was sent")
      expect(yield* firesOf(bot.botId)).toHaveLength(0)
    }))
})
