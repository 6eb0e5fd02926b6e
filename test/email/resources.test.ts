import { SqlClient } from "@effect/sql"
import { describe, expect, it as plain, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { ConfigurationSets } from "../../src/email/ConfigurationSets.ts"
import { EmailTemplates } from "../../src/email/EmailTemplates.ts"
import { ProductionAccess } from "../../src/email/ProductionAccess.ts"
import { render } from "../../src/email/renderTemplate.ts"
import { reputationStatus, SendingStats } from "../../src/email/SendingStats.ts"
import { Suppression } from "../../src/email/Suppression.ts"
import { ChangeFeed } from "../../src/storage/ChangeFeed.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"
import { openSealed } from "../support/sealed.ts"
import { PresentedAccess, PresentedSets, PresentedStats, PresentedSuppression, PresentedTemplates } from "./presented.ts"

// The partner e-mail API's resources in process against a real database, with private webhook
// targets refused as in production (WEBHOOK_ALLOW_PRIVATE=false).

const Env = Layer.mergeAll(
  ConfigurationSets.Default,
  EmailTemplates.Default,
  Suppression.Default,
  ProductionAccess.Default,
  SendingStats.Default,
  ChangeFeed.Default
).pipe(
  Layer.provideMerge(Storage.Default),
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(TestConfig({ webhookAllowPrivate: false })),
  Layer.provideMerge(IsolationLive)
)

/** A partner row of its own (the key is never used here). */
const newPartner = Effect.gen(function*() {
  yield* (yield* Storage).awaitReady
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ partnerId: string }>`
    INSERT INTO partners (name, key_hash, key_last_four) VALUES ('test', ${randomBytes(16).toString("hex")}, 'abcd')
    RETURNING partner_id::text`
  return row!.partnerId
})

/** An issue's path of a 400. */
const pathsOf = (error: unknown) => ((error as { errors?: ReadonlyArray<{ path: string }> }).errors ?? []).map((e) => e.path)

/** The same cursor with one character of its body changed. */
const edited = (cursor: string) => (cursor[0] === "A" ? "B" : "A") + cursor.slice(1)

interface Page {
  readonly names: ReadonlyArray<string>
  readonly next_cursor?: string | undefined
}

/**
 * Walks a list with limit 2 from its first page, adding a row before each later page: every row
 * there at the first page comes once, in order, and the added ones never appear.
 */
const walk = (
  page: (limit: number, cursor: string | undefined) => Effect.Effect<Page, unknown>,
  add: (i: number) => Effect.Effect<string, unknown>,
  expected: ReadonlyArray<string>
) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    const added: Array<string> = []
    let cursor: string | undefined
    let pagesRead = 0
    do {
      const result = yield* page(2, cursor)
      expect(result.names.length).toBeLessThanOrEqual(2)
      seen.push(...result.names)
      pagesRead++
      if (result.next_cursor !== undefined) {
        // The same cursor twice: the same rows.
        const again = yield* page(2, result.next_cursor)
        const twice = yield* page(2, result.next_cursor)
        expect(twice.names).toEqual(again.names)
        added.push(yield* add(pagesRead))
      }
      cursor = result.next_cursor
    } while (cursor !== undefined)
    expect(seen).toEqual(expected)
    expect(pagesRead).toBe(Math.ceil(expected.length / 2))
    // The first page now starts with what was added meanwhile, newest first.
    const first = yield* page(added.length, undefined)
    expect(first.names).toEqual([...added].reverse())
  })

layer(Env, { timeout: 60_000, excludeTestServices: true })("partner e-mail resources", (it) => {
  it.scoped("configuration sets: destinations as email webhooks, replaced by PATCH, soft-deleted with the set", () =>
    Effect.gen(function*() {
      const partnerId = yield* newPartner
      const other = yield* newPartner
      const sets = yield* PresentedSets
      const sql = yield* SqlClient.SqlClient
      const told: Array<string> = []
      yield* (yield* ChangeFeed).subscribe((table, accountId) => {
        if (table === "webhooks") told.push(accountId)
      })

      const created = yield* sets.create(partnerId, {
        name: "transactional",
        event_destinations: [
          { url: "https://hooks.example.com/a", events: ["DELIVERY", "BOUNCE", "DELIVERY"] },
          { url: "https://hooks.example.com/b", events: ["COMPLAINT"] }
        ]
      })
      expect(created).toMatchObject({ success: true, name: "transactional" })
      expect(created.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      expect(created.event_destinations.map((d) => [d.url, d.events])).toEqual([
        ["https://hooks.example.com/a", ["DELIVERY", "BOUNCE"]],
        ["https://hooks.example.com/b", ["COMPLAINT"]]
      ])
      for (const d of created.event_destinations) expect(d.secret).toMatch(/^whsec_/)
      expect(told).toContain(partnerId)
      const [a, b] = created.event_destinations
      const stored = yield* sql<{ webhookId: string; accountId: string; channel: string; events: ReadonlyArray<string>; configSetId: string; secret: string; botId: string | null }>`
        SELECT webhook_id::text, account_id::text, channel, events, config_set_id::text, secret, bot_id FROM webhooks
        WHERE account_id = ${partnerId}::uuid ORDER BY created_at`
      const setId = yield* sets.idOf(partnerId, "transactional")
      expect(setId).toBeDefined()
      // The secret is stored sealed (SecretBox): it opens, under the node's key, to the one answered at creation.
      const key = Redacted.value((yield* AppConfig).secretsKey)
      for (const row of stored) expect(row.secret).toMatch(/^v1\./)
      expect(stored.map((row) => ({ ...row, secret: openSealed(row.secret, key) }))).toEqual([
        { webhookId: a!.destination_id, accountId: partnerId, channel: "email", events: ["email.delivery", "email.bounce"], configSetId: setId, secret: a!.secret, botId: null },
        { webhookId: b!.destination_id, accountId: partnerId, channel: "email", events: ["email.complaint"], configSetId: setId, secret: b!.secret, botId: null }
      ])

      // Read back: no secrets.
      const got = yield* sets.get(partnerId, "transactional")
      expect(got).toEqual({ ...created, event_destinations: created.event_destinations.map(({ secret: _s, ...d }) => d) })
      expect(got.event_destinations.every((d) => !("secret" in d))).toBe(true)

      // 409 on the name; 400s naming the field.
      expect(yield* Effect.flip(sets.create(partnerId, { name: "transactional" }))).toMatchObject({ _tag: "Conflict", key: "name" })
      const refused = yield* Effect.flip(sets.create(partnerId, {
        name: "refused",
        event_destinations: [{ url: "https://ok.example.com", events: ["SEND"] }, { url: "http://127.0.0.1/hook", events: ["SEND"] }, { url: "ftp://x.example.com", events: ["SEND"] }]
      }))
      expect(refused._tag).toBe("InvalidRequest")
      expect(pathsOf(refused)).toEqual(["event_destinations[1].url", "event_destinations[2].url"])
      expect(pathsOf(yield* Effect.flip(sets.create(partnerId, { name: "bad name!" })))).toEqual(["name"])
      expect(pathsOf(yield* Effect.flip(sets.create(partnerId, { name: "kept", event_destinations: [{ destination_id: a!.destination_id, url: "https://x.example.com", events: ["SEND"] }] })))).toEqual(["event_destinations[0].destination_id"])
      expect(yield* sets.idOf(partnerId, "refused")).toBeUndefined()

      // PATCH replaces: a kept (URL and events changed), b dropped, c new.
      told.length = 0
      const updated = yield* sets.update(partnerId, "transactional", {
        event_destinations: [
          { destination_id: a!.destination_id, url: "https://hooks.example.com/a2", events: ["SEND"] },
          { url: "https://hooks.example.com/c", events: ["REJECT", "SUPPRESSED"] }
        ]
      })
      expect(told).toContain(partnerId)
      expect(updated.event_destinations).toHaveLength(2)
      expect(updated.event_destinations[0]).toEqual({ destination_id: a!.destination_id, url: "https://hooks.example.com/a2", events: ["SEND"] })
      const c = updated.event_destinations[1]!
      expect(c).toMatchObject({ url: "https://hooks.example.com/c", events: ["REJECT", "SUPPRESSED"] })
      expect(c.secret).toMatch(/^whsec_/)
      const states = yield* sql<{ webhookId: string; url: string; active: boolean; deleted: boolean; secret: string }>`
        SELECT webhook_id::text, url, active, deleted_at IS NOT NULL AS deleted, secret FROM webhooks WHERE account_id = ${partnerId}::uuid`
      const byId = new Map(states.map((s) => [s.webhookId, { ...s, secret: openSealed(s.secret, key) }]))
      expect(byId.get(a!.destination_id)).toMatchObject({ url: "https://hooks.example.com/a2", active: true, deleted: false, secret: a!.secret })
      expect(byId.get(b!.destination_id)).toMatchObject({ active: false, deleted: true })
      expect(byId.get(c.destination_id)).toMatchObject({ active: true, deleted: false })

      // Unknown destination ids: malformed, deleted, or another set's.
      const otherSet = yield* sets.create(partnerId, { name: "other-set", event_destinations: [{ url: "https://o.example.com", events: ["SEND"] }] })
      for (const id of ["not-a-uuid", b!.destination_id, otherSet.event_destinations[0]!.destination_id]) {
        const error = yield* Effect.flip(sets.update(partnerId, "transactional", { event_destinations: [{ url: "https://ok.example.com", events: ["SEND"] }, { destination_id: id, url: "https://ok.example.com", events: ["SEND"] }] }))
        expect(error._tag).toBe("InvalidRequest")
        expect(pathsOf(error)).toEqual(["event_destinations[1].destination_id"])
      }
      expect((yield* sets.get(partnerId, "transactional")).event_destinations.map((d) => d.destination_id)).toEqual([a!.destination_id, c.destination_id])

      // Another partner's set, a malformed name, an unknown one: 404.
      for (const name of ["nope", "bad name/..", ""]) {
        expect(yield* Effect.flip(sets.get(partnerId, name))).toMatchObject({ _tag: "NotFound" })
        expect(yield* Effect.flip(sets.update(partnerId, name, { event_destinations: [] }))).toMatchObject({ _tag: "NotFound" })
        expect(yield* Effect.flip(sets.remove(partnerId, name))).toMatchObject({ _tag: "NotFound" })
      }
      expect(yield* Effect.flip(sets.get(other, "transactional"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* sets.idOf(other, "transactional")).toBeUndefined()

      // Empty replacement: every destination soft-deleted, the set stays.
      const emptied = yield* sets.update(partnerId, "other-set", { event_destinations: [] })
      expect(emptied.event_destinations).toEqual([])

      // DELETE: the destinations soft-deleted, the set gone.
      told.length = 0
      expect(yield* sets.remove(partnerId, "transactional")).toEqual({ success: true })
      expect(told).toContain(partnerId)
      const live = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhooks WHERE account_id = ${partnerId}::uuid AND deleted_at IS NULL`
      expect(live[0]!.n).toBe(0)
      const dead = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhooks WHERE account_id = ${partnerId}::uuid AND deleted_at IS NOT NULL AND NOT active`
      expect(dead[0]!.n).toBe(4)
      expect(yield* Effect.flip(sets.get(partnerId, "transactional"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(sets.remove(partnerId, "transactional"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* sets.idOf(partnerId, "transactional")).toBeUndefined()
      // The name is free again.
      expect((yield* sets.create(partnerId, { name: "transactional" })).event_destinations).toEqual([])
    }))

  it.effect("configuration sets: a list walked page by page while sets are added; cursors signed per list and partner", () =>
    Effect.gen(function*() {
      const partnerId = yield* newPartner
      const other = yield* newPartner
      const sets = yield* PresentedSets
      for (let i = 0; i < 5; i++) {
        yield* sets.create(partnerId, { name: `set-${i}`, event_destinations: i % 2 === 0 ? [{ url: `https://h.example.com/${i}`, events: ["SEND"] }] : [] })
      }
      const page = (limit: number, cursor: string | undefined) =>
        Effect.map(sets.list(partnerId, { limit, next_cursor: cursor }), (p) => {
          expect(p.count).toBe(p.configuration_sets.length)
          expect(Object.keys(p).sort()).toEqual(p.next_cursor === undefined ? ["configuration_sets", "count", "success"] : ["configuration_sets", "count", "next_cursor", "success"])
          return { names: p.configuration_sets.map((s) => s.name), next_cursor: p.next_cursor }
        })
      const first = yield* sets.list(partnerId, { limit: 2 })
      expect(first.configuration_sets[0]).toMatchObject({ name: "set-4", event_destinations: [{ url: "https://h.example.com/4", events: ["SEND"] }] })
      expect(first.configuration_sets[0]!.event_destinations[0]).not.toHaveProperty("secret")
      yield* walk(page, (i) => Effect.map(sets.create(partnerId, { name: `added-${i}` }), (s) => s.name), ["set-4", "set-3", "set-2", "set-1", "set-0"])

      const cursor = first.next_cursor!
      expect(yield* Effect.flip(sets.list(partnerId, { limit: 2, next_cursor: edited(cursor) }))).toMatchObject({ _tag: "InvalidCursor" })
      expect(yield* Effect.flip(sets.list(partnerId, { limit: 2, next_cursor: "garbage" }))).toMatchObject({ _tag: "InvalidCursor" })
      // Another partner's list, or another list of the same partner, does not take it.
      expect(yield* Effect.flip(sets.list(other, { limit: 2, next_cursor: cursor }))).toMatchObject({ _tag: "InvalidCursor" })
      expect(yield* Effect.flip((yield* PresentedTemplates).list(partnerId, { limit: 2, next_cursor: cursor }))).toMatchObject({ _tag: "InvalidCursor" })
      expect(yield* sets.list(other, {})).toEqual({ success: true, configuration_sets: [], count: 0 })
    }))

  it.effect("templates: create, read, replace, delete, find for rendering", () =>
    Effect.gen(function*() {
      const partnerId = yield* newPartner
      const other = yield* newPartner
      const templates = yield* PresentedTemplates
      const created = yield* templates.create(partnerId, { name: "welcome", subject: "Hi {{name}}", html: "<p>{{name}}</p>" })
      expect(created).toEqual({ success: true, name: "welcome", subject: "Hi {{name}}", html: "<p>{{name}}</p>", created_at: created.created_at })
      expect(created).not.toHaveProperty("text")
      expect(yield* templates.get(partnerId, "welcome")).toEqual(created)

      expect(yield* Effect.flip(templates.create(partnerId, { name: "welcome", subject: "x", text: "y" }))).toMatchObject({ _tag: "Conflict", key: "name" })
      expect(pathsOf(yield* Effect.flip(templates.create(partnerId, { name: "bare", subject: "x" })))).toEqual(["html"])
      expect(pathsOf(yield* Effect.flip(templates.create(partnerId, { name: "blank", subject: "x", html: "", text: "" })))).toEqual(["html"])
      expect(pathsOf(yield* Effect.flip(templates.create(partnerId, { name: "no subject", subject: " ", text: "y" })))).toEqual(["name", "subject"])
      expect(yield* templates.find(partnerId, "bare")).toBeUndefined()

      // PUT replaces every part: html left out is removed.
      const updated = yield* templates.update(partnerId, "welcome", { subject: "Hello {{ name }}", text: "Hello {{name}}" })
      expect(updated).toEqual({ success: true, name: "welcome", subject: "Hello {{ name }}", text: "Hello {{name}}", created_at: created.created_at })
      expect(pathsOf(yield* Effect.flip(templates.update(partnerId, "welcome", { subject: "x" })))).toEqual(["html"])
      expect(yield* templates.find(partnerId, "welcome")).toEqual({ subject: "Hello {{ name }}", html: null, text: "Hello {{name}}" })

      for (const name of ["nope", "../welcome", "welcome "]) {
        expect(yield* Effect.flip(templates.get(partnerId, name))).toMatchObject({ _tag: "NotFound" })
        expect(yield* Effect.flip(templates.update(partnerId, name, { subject: "x", text: "y" }))).toMatchObject({ _tag: "NotFound" })
        expect(yield* Effect.flip(templates.remove(partnerId, name))).toMatchObject({ _tag: "NotFound" })
      }
      expect(yield* Effect.flip(templates.get(other, "welcome"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* templates.find(other, "welcome")).toBeUndefined()

      expect(yield* templates.remove(partnerId, "welcome")).toEqual({ success: true })
      expect(yield* Effect.flip(templates.get(partnerId, "welcome"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* templates.find(partnerId, "welcome")).toBeUndefined()
    }))

  it.effect("templates: a list walked page by page while templates are added", () =>
    Effect.gen(function*() {
      const partnerId = yield* newPartner
      const templates = yield* PresentedTemplates
      for (let i = 0; i < 6; i++) yield* templates.create(partnerId, { name: `t${i}`, subject: "s", text: "b" })
      const page = (limit: number, cursor: string | undefined) =>
        Effect.map(templates.list(partnerId, { limit, next_cursor: cursor }), (p) => ({ names: p.templates.map((t) => t.name), next_cursor: p.next_cursor }))
      yield* walk(page, (i) => Effect.map(templates.create(partnerId, { name: `added${i}`, subject: "s", html: "<b>h</b>" }), (t) => t.name), ["t5", "t4", "t3", "t2", "t1", "t0"])
      const all = yield* templates.list(partnerId, {})
      expect(all.count).toBe(8)
      expect(all.next_cursor).toBeUndefined()
    }))

  it.effect("suppression: normalised addresses, upsert keeps the row's place, 400 and 404", () =>
    Effect.gen(function*() {
      const partnerId = yield* newPartner
      const other = yield* newPartner
      const suppression = yield* PresentedSuppression
      const put = yield* suppression.put(partnerId, " Someone@Example.COM ")
      expect(put).toEqual({ success: true, email: "someone@example.com", reason: "MANUAL", created_at: put.created_at })
      const again = yield* suppression.put(partnerId, "someone@example.com", "BOUNCE")
      expect(again).toEqual({ ...put, reason: "BOUNCE" })
      expect(yield* suppression.get(partnerId, "SOMEONE@example.com")).toEqual(again)

      expect(pathsOf(yield* Effect.flip(suppression.put(partnerId, "not an address")))).toEqual(["email"])
      expect(yield* Effect.flip(suppression.get(partnerId, "not an address"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(suppression.get(partnerId, "nobody@example.com"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(suppression.get(other, "someone@example.com"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(suppression.remove(other, "someone@example.com"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(suppression.remove(partnerId, "%%%"))).toMatchObject({ _tag: "NotFound" })

      expect(yield* suppression.remove(partnerId, "Someone@example.com")).toEqual({ success: true })
      expect(yield* Effect.flip(suppression.remove(partnerId, "someone@example.com"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(suppression.get(partnerId, "someone@example.com"))).toMatchObject({ _tag: "NotFound" })

      // The list, newest first, walked while addresses are added; a re-put row keeps its place.
      for (let i = 0; i < 5; i++) yield* suppression.put(partnerId, `u${i}@example.com`, i === 0 ? "COMPLAINT" : undefined)
      yield* suppression.put(partnerId, "u1@example.com", "BOUNCE")
      const page = (limit: number, cursor: string | undefined) =>
        Effect.map(suppression.list(partnerId, { limit, next_cursor: cursor }), (p) => ({ names: p.suppression.map((s) => s.email), next_cursor: p.next_cursor }))
      yield* walk(page, (i) => Effect.map(suppression.put(partnerId, `added${i}@example.com`), (s) => s.email), ["u4@example.com", "u3@example.com", "u2@example.com", "u1@example.com", "u0@example.com"])
      const listed = yield* suppression.list(partnerId, { limit: 1000 })
      expect(listed.suppression.find((s) => s.email === "u1@example.com")?.reason).toBe("BOUNCE")
      expect(listed.suppression.find((s) => s.email === "u0@example.com")?.reason).toBe("COMPLAINT")
    }))

  it.effect("production access: one pending request, none once granted; listed newest first", () =>
    Effect.gen(function*() {
      const partnerId = yield* newPartner
      const access = yield* PresentedAccess
      const sql = yield* SqlClient.SqlClient
      const input = { mail_type: "TRANSACTIONAL" as const, website_url: "https://shop.example.com", use_case_description: "Receipts." }

      for (const url of ["ftp://shop.example.com", "shop.example.com", "javascript:alert(1)"]) {
        expect(pathsOf(yield* Effect.flip(access.request(partnerId, { ...input, website_url: url })))).toEqual(["website_url"])
      }
      expect(pathsOf(yield* Effect.flip(access.request(partnerId, { ...input, use_case_description: "  " })))).toEqual(["use_case_description"])

      const first = yield* access.request(partnerId, input)
      expect(first).toEqual({
        success: true,
        id: first.id,
        mail_type: "TRANSACTIONAL",
        website_url: "https://shop.example.com",
        use_case_description: "Receipts.",
        status: "PENDING",
        created_at: first.created_at
      })
      expect(yield* Effect.flip(access.request(partnerId, input))).toMatchObject({ _tag: "Conflict", key: "production_access" })

      // Denied: a new request may follow.
      yield* sql`UPDATE email_production_access SET status = 'DENIED', reason = 'tell us more', decided_at = now() WHERE request_id = ${first.id}::uuid`
      const second = yield* access.request(partnerId, { ...input, mail_type: "MARKETING" })
      expect(second.status).toBe("PENDING")
      const listed = yield* access.list(partnerId, {})
      expect(listed).toEqual({
        success: true,
        count: 2,
        production_access: [
          { id: second.id, mail_type: "MARKETING", website_url: input.website_url, use_case_description: input.use_case_description, status: "PENDING", created_at: second.created_at },
          { id: first.id, mail_type: "TRANSACTIONAL", website_url: input.website_url, use_case_description: input.use_case_description, status: "DENIED", reason: "tell us more", created_at: first.created_at }
        ]
      })

      // Granted: no request at all.
      yield* sql`UPDATE email_production_access SET status = 'GRANTED', decided_at = now() WHERE request_id = ${second.id}::uuid`
      yield* sql`UPDATE partners SET production_access = true WHERE partner_id = ${partnerId}::uuid`
      expect(yield* Effect.flip(access.request(partnerId, input))).toMatchObject({ _tag: "Conflict", key: "production_access" })

      // Paging (rows written as the operator's decisions would).
      const paged = yield* newPartner
      const insert = (n: number) =>
        Effect.as(
          sql`INSERT INTO email_production_access (partner_id, mail_type, website_url, use_case_description, status)
              VALUES (${paged}::uuid, 'MARKETING', ${`https://${n}.example.com`}, ${`r${n}`}, 'DENIED')`,
          `r${n}`
        )
      for (let i = 0; i < 5; i++) yield* insert(i)
      const page = (limit: number, cursor: string | undefined) =>
        Effect.map(access.list(paged, { limit, next_cursor: cursor }), (p) => ({ names: p.production_access.map((r) => r.use_case_description), next_cursor: p.next_cursor }))
      yield* walk(page, (i) => insert(100 + i), ["r4", "r3", "r2", "r1", "r0"])
      const cursor = (yield* access.list(paged, { limit: 1 })).next_cursor!
      expect(yield* Effect.flip(access.list(paged, { limit: 1, next_cursor: edited(cursor) }))).toMatchObject({ _tag: "InvalidCursor" })
    }))

  it.effect("quotas, stats and reputation from the partner's messages, recipients and events", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const stats = yield* PresentedStats
      const partnerId = yield* newPartner
      const quiet = yield* newPartner

      const message = (ago: string, recipients: ReadonlyArray<readonly [string, string]>) =>
        Effect.gen(function*() {
          const messageId = randomUUID()
          yield* sql`
            INSERT INTO email_messages (message_id, partner_id, from_address, to_addresses, subject, recipient_count, status, created_at)
            VALUES (${messageId}::uuid, ${partnerId}::uuid, 'me@example.com', ${recipients.map(([r]) => r)}::text[], 's', ${recipients.length}, 'SENT', now() - ${ago}::interval)`
          for (const [recipient, status] of recipients) {
            yield* sql`INSERT INTO email_recipients (message_id, recipient, partner_id, status) VALUES (${messageId}::uuid, ${recipient}, ${partnerId}::uuid, ${status})`
          }
          return messageId
        })
      const event = (messageId: string, ago: string, type: string, recipient: string | null, detail = "") =>
        sql`INSERT INTO email_events (partner_id, message_id, type, recipient, detail, created_at)
            VALUES (${partnerId}::uuid, ${messageId}::uuid, ${type}, ${recipient}, ${detail}, now() - ${ago}::interval)`

      const a = yield* message("1 hour", [["a1@x.com", "delivered"], ["a2@x.com", "bounced"], ["a3@x.com", "suppressed"]])
      yield* event(a, "1 hour", "SEND", null)
      yield* event(a, "1 hour", "DELIVERY", "a1@x.com")
      yield* event(a, "1 hour", "BOUNCE", "a2@x.com", "550 5.1.1 no such user")
      yield* event(a, "1 hour", "SUPPRESSED", "a3@x.com")
      const d = yield* message("2 hours", [["d1@x.com", "rejected"]])
      yield* event(d, "2 hours", "SEND", null)
      yield* event(d, "2 hours", "REJECT", "d1@x.com", "554 content refused")
      const b = yield* message("3 days", [["b1@x.com", "delivered"], ["b2@x.com", "complained"]])
      yield* event(b, "3 days", "SEND", null)
      yield* event(b, "3 days", "DELIVERY", "b1@x.com")
      yield* event(b, "3 days", "DELIVERY", "b2@x.com")
      yield* event(b, "4319 minutes", "COMPLAINT", "b2@x.com")
      const e = yield* message("5 days", [["e1@x.com", "bounced"]])
      yield* event(e, "5 days", "BOUNCE", "e1@x.com", "soft")
      // Outside every window.
      const c = yield* message("20 days", [["c1@x.com", "delivered"], ["c2@x.com", "delivered"]])
      yield* event(c, "20 days", "DELIVERY", "c1@x.com")
      yield* event(c, "20 days", "BOUNCE", "c2@x.com", "550")

      expect(yield* stats.quotas(partnerId)).toEqual({ success: true, max_24_hour_send: 200, max_send_rate: 1, sent_last_24_hours: 4, production_access_enabled: false })
      expect(yield* stats.stats(partnerId)).toEqual({
        success: true,
        stats: {
          last_24_hours: { sent: 3, delivered: 1, bounced: 1, complained: 0, rejected: 1 },
          last_14_days: { sent: 6, delivered: 3, bounced: 2, complained: 1, rejected: 1 }
        }
      })
      // Hard bounces 1 (a2; e1 was soft) over 6 sent; complaints 1 over 3 deliveries.
      const reputation = yield* stats.reputation(partnerId)
      expect(reputation.bounce_rate).toBeCloseTo(1 / 6, 10)
      expect(reputation.complaint_rate).toBeCloseTo(1 / 3, 10)
      expect(reputation.status).toBe("PROBATION")

      // A partner with nothing sent.
      yield* sql`UPDATE partners SET max_24_hour_send = 50000, max_send_rate = 14, production_access = true WHERE partner_id = ${quiet}::uuid`
      expect(yield* stats.quotas(quiet)).toEqual({ success: true, max_24_hour_send: 50000, max_send_rate: 14, sent_last_24_hours: 0, production_access_enabled: true })
      const zero = { sent: 0, delivered: 0, bounced: 0, complained: 0, rejected: 0 }
      expect(yield* stats.stats(quiet)).toEqual({ success: true, stats: { last_24_hours: zero, last_14_days: zero } })
      expect(yield* stats.reputation(quiet)).toEqual({ success: true, bounce_rate: 0, complaint_rate: 0, status: "HEALTHY" })

      // 1 hard bounce in 20 recipients: 5 %, a WARNING.
      const warned = yield* newPartner
      const messageId = randomUUID()
      yield* sql`
        INSERT INTO email_messages (message_id, partner_id, from_address, to_addresses, subject, recipient_count, status)
        VALUES (${messageId}::uuid, ${warned}::uuid, 'me@example.com', '{}', 's', 20, 'SENT')`
      yield* sql`
        INSERT INTO email_recipients (message_id, recipient, partner_id, status)
        SELECT ${messageId}::uuid, 'r' || i || '@x.com', ${warned}::uuid, CASE WHEN i = 1 THEN 'bounced' ELSE 'delivered' END FROM generate_series(1, 20) i`
      yield* sql`
        INSERT INTO email_events (partner_id, message_id, type, recipient, detail)
        SELECT ${warned}::uuid, ${messageId}::uuid, CASE WHEN i = 1 THEN 'BOUNCE' ELSE 'DELIVERY' END, 'r' || i || '@x.com', CASE WHEN i = 1 THEN '550' ELSE '250' END
        FROM generate_series(1, 20) i`
      expect(yield* stats.reputation(warned)).toEqual({ success: true, bounce_rate: 0.05, complaint_rate: 0, status: "WARNING" })
      expect(yield* stats.quotas(warned)).toMatchObject({ sent_last_24_hours: 20 })
    }))
})

describe("render", () => {
  plain("fills placeholders, HTML-escaping values in the html part only", () => {
    const rendered = render(
      { subject: "Hi {{ user.name }}\r\n", html: "<p>{{user.name}} owes {{amount}} ({{paid}})</p>{{note}}", text: "{{user.name}} owes {{ amount }}; {{note}}" },
      { user: { name: "Tom & <Jerry> \"Q\" 'x'" }, amount: 12.5, paid: false, note: null }
    )
    expect(rendered).toEqual({
      subject: "Hi Tom & <Jerry> \"Q\" 'x' ",
      html: "<p>Tom &amp; &lt;Jerry&gt; &quot;Q&quot; &#39;x&#39; owes 12.5 (false)</p>",
      text: "Tom & <Jerry> \"Q\" 'x' owes 12.5; "
    })
  })

  plain("strips CR and LF from the subject, values included", () => {
    expect(render({ subject: "A {{v}}", html: null, text: "t" }, { v: "b\r\nBcc: evil@example.com" })).toEqual({ subject: "A b Bcc: evil@example.com", html: null, text: "t" })
  })

  plain("a placeholder the data does not fill is a problem, like SES's rendering failure", () => {
    expect(render({ subject: "Hi", html: "{{user.name}}", text: null }, { user: {} })).toEqual({ problem: "template.data is missing user.name" })
    expect(render({ subject: "Hi {{name}}", html: null, text: "x" }, {})).toEqual({ problem: "template.data is missing name" })
    expect(render({ subject: "{{constructor}}", html: null, text: "x" }, {})).toEqual({ problem: "template.data is missing constructor" })
    expect(render({ subject: "{{a.b}}", html: null, text: "x" }, { a: "text" })).toEqual({ problem: "template.data is missing a.b" })
    expect(render({ subject: "{{a}}", html: null, text: "x" }, { a: { b: 1 } })).toEqual({ problem: "template.data.a must be a string, number or boolean" })
  })

  plain("fills once: a value that reads like a placeholder stays as it is", () => {
    expect(render({ subject: "{{a}}", html: "{{a}}", text: "{{ b }}" }, { a: "{{b}}", b: 1 })).toEqual({ subject: "{{b}}", html: "{{b}}", text: "1" })
  })

  plain("reputation thresholds are SES's", () => {
    expect(reputationStatus(0, 0)).toBe("HEALTHY")
    expect(reputationStatus(0.0499, 0.00099)).toBe("HEALTHY")
    expect(reputationStatus(0.05, 0)).toBe("WARNING")
    expect(reputationStatus(0, 0.001)).toBe("WARNING")
    expect(reputationStatus(0.1, 0)).toBe("PROBATION")
    expect(reputationStatus(0.01, 0.005)).toBe("PROBATION")
  })
})
