import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import http from "node:http"
import { lookup } from "node:dns/promises"
import { hostname } from "node:os"
import type { Email } from "../../src/domain/identity.ts"
import { AccountsRepo } from "../../src/accounts/AccountsRepo.ts"
import { BotsRepo } from "../../src/bots/BotsRepo.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { Templates } from "../../src/templates/Templates.ts"
import { TemplatesRepo } from "../../src/templates/TemplatesRepo.ts"
import { isPrivateAddress } from "../../src/webhooks/urlPolicy.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"
import { signedIn } from "../support/principals.ts"

// The templates service in process against a real database, with private targets refused as in
// production (WEBHOOK_ALLOW_PRIVATE=false): the e2e tests run with them allowed.

const Env = Layer.mergeAll(Templates.Default, TemplatesRepo.Default, AccountsRepo.Default).pipe(
  Layer.provideMerge(BotsRepo.Default),
  Layer.provideMerge(Storage.Default),
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(TestConfig({ webhookAllowPrivate: false })),
  Layer.provideMerge(IsolationLive)
)

/** A media host on loopback that would accept anything: only the policy may refuse it. */
const mediaServer = Effect.acquireRelease(
  Effect.promise(async () => {
    let requests = 0
    const server = http.createServer((_req, res) => {
      requests++
      res.writeHead(200, { "content-type": "image/png", "content-length": "10" }).end()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return { server, port: (server.address() as { port: number }).port, requests: () => requests }
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

const setup = Effect.gen(function*() {
  yield* (yield* Storage).awaitReady
  const email = `t${Math.random().toString(36).slice(2)}@example.com` as Email
  const { accountId } = yield* (yield* AccountsRepo).createWithOwner({ email, passwordHash: "x", label: "T", plan: "growth" })
  const bot = yield* (yield* BotsRepo).create({ accountId, name: "Bot", useCase: null, status: "active" })
  return { accountId, botId: bot.botId, owner: signedIn(accountId) }
})

layer(Env, { timeout: 60_000, excludeTestServices: true })("templates service", (it) => {
  it.scoped("refuses media on private or loopback targets, by literal address and by name, without fetching it", () =>
    Effect.gen(function*() {
      const { botId, owner } = yield* setup
      const host = yield* mediaServer
      const templates = yield* Templates
      const refused = (url: string) =>
        Effect.flip(templates.create(owner, { botId, name: url, type: "rich_card", rich_card: { media: { url, height: "medium" } }, suggestions: [] }))
      for (const url of [`http://127.0.0.1:${host.port}/a.png`, `http://localhost:${host.port}/a.png`, `http://[::1]:${host.port}/a.png`]) {
        const error = yield* refused(url)
        expect(error).toMatchObject({ _tag: "TemplateInvalid", errors: ["rich_card.media.url: must not target a private or loopback address"] })
      }
      // A name that only DNS shows to be loopback is refused at connect time (the webhooks' guard).
      const addresses = yield* Effect.promise(() => lookup(hostname(), { all: true }).catch(() => []))
      if (addresses.length > 0 && addresses.every((a) => isPrivateAddress(a.address))) {
        const error = yield* refused(`http://${hostname()}:${host.port}/a.png`)
        expect(error).toMatchObject({ _tag: "TemplateInvalid", errors: ["rich_card.media.url: must not target a private or loopback address"] })
      }
      expect(host.requests()).toBe(0)
    }))

  it.effect("a usable template is a live, approved one of the account: its bot and content; deleted or another account's is nothing", () =>
    Effect.gen(function*() {
      const { accountId, botId, owner } = yield* setup
      const other = yield* setup
      const templates = yield* Templates
      const repo = yield* TemplatesRepo
      const created = yield* templates.create(owner, {
        botId,
        name: "Welcome",
        type: "rich_card",
        rich_card: { title: "Hi", description: "Welcome aboard" },
        suggestions: [{ type: "reply", text: "Thanks" }]
      })
      expect(yield* repo.usable(accountId, created.templateId)).toEqual({
        botId,
        content: { type: "rich_card", rich_card: { title: "Hi", description: "Welcome aboard" }, suggestions: [{ type: "reply", text: "Thanks" }] }
      })
      expect(yield* repo.usable(other.accountId, created.templateId)).toBeUndefined()
      expect(yield* repo.usable(accountId, "not-a-uuid")).toBeUndefined()
      yield* templates.remove(owner, created.templateId)
      expect(yield* repo.usable(accountId, created.templateId)).toBeUndefined()
    }))
})
