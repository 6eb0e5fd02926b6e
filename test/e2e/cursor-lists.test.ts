import { OpenApi } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { randomUUID } from "node:crypto"
import { HeraldApi } from "../../src/http/Api.ts"
import { useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// Every cursor-paged list of the API, walked to its end by `next_cursor` while rows are being
// added (newer ones, ones tied on the sort key with rows already seen, older ones in the middle),
// with page sizes chosen by fast-check. Each row present when the walk starts comes back exactly
// once, nothing comes twice, and the walk runs strictly down the list's order. A list joins by a
// row in LISTS: the coverage test fails for any GET of the OpenAPI document taking a `cursor`
// that is not here. (Issue 15: contacts came back in text order, '999' after '1000', while the
// cursor compared numbers.)

const SEED = 1_200
const RUNS = Number(process.env.CURSOR_RUNS ?? 4)

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso)
const cli = cliFor(env)
let node: HeraldProcess
let token = ""
const ids = { account: "", bot: "", list: "", broadcast: "", importList: "", secretKey: "", segment: "", number: "", campaign: "" }

/** Where a new row goes in its list: on top, tied on the sort key with an existing row, or among older rows. */
type Place = "top" | "tie" | "middle"

interface ListUnderTest {
  /** The path as the OpenAPI document writes it. */
  readonly route: string
  readonly url: () => string
  /** The array of the answer and a row's identity. */
  readonly field: string
  readonly id: (row: any) => string
  /** The order the list runs down: a row's sort key, compared as numbers. */
  readonly key: (row: any) => number
  /** Whether two rows may share a key (then the id breaks the tie and keys need only not rise). */
  readonly ties: boolean
  readonly seed: () => Promise<void>
  readonly present: () => Promise<Set<string>>
  readonly add: (place: Place) => Promise<void>
  /** The credential, when the list is not an RCS one (the public API's Basic secret key). */
  readonly auth?: () => string
  /** The list's largest page, when below 1000: larger page sizes are walked at it. */
  readonly maxLimit?: number
}

/** A timestamp column's value for a new row: now, an existing row's (a tie), or one among the older rows. */
const placedAt = async (table: string, column: string, where: string, place: Place) => {
  if (place === "top") return "now()"
  const [row] = await db<{ at: string }>(
    place === "tie"
      ? `SELECT ${column}::text AS at FROM ${table} WHERE ${where} ORDER BY random() LIMIT 1`
      : `SELECT (min(${column}) + (max(${column}) - min(${column})) * random())::text AS at FROM ${table} WHERE ${where}`
  )
  return `'${row!.at}'::timestamptz`
}

/** Seeded rows spread over the last hour, a tenth of them sharing one instant (ties broken by id). */
const spread = (n: string) => `CASE WHEN ${n} % 10 = 0 THEN now() - interval '30 minutes' ELSE now() - (${n} || ' seconds')::interval * 3 END`

/**
 * A list paged newest first by a timestamp, its rows written straight into `table`: `values(n)`
 * gives the SQL of the other columns' values for a row whose unique text is `n`.
 */
const byTime = (spec: {
  readonly route: string
  readonly url: () => string
  readonly field: string
  readonly idField: string
  readonly timeField: string
  readonly table: string
  readonly idColumn: string
  readonly timeColumn: string
  /** The rows of this list: a WHERE condition. */
  readonly scope: () => string
  readonly columns: string
  readonly values: (n: string) => string
  readonly auth?: () => string
  readonly maxLimit?: number
  /** Rows another list of the same table seeds (a segment's members are the account's customers). */
  readonly seededElsewhere?: boolean
}): ListUnderTest => {
  const insert = (rows: string, at: string, n: string) =>
    db(`INSERT INTO ${spec.table} (${spec.columns}, ${spec.timeColumn}) SELECT ${spec.values(n)}, ${at} ${rows}`).then(() => undefined)
  return {
    route: spec.route,
    url: spec.url,
    field: spec.field,
    id: (r) => r[spec.idField],
    key: (r) => Date.parse(r[spec.timeField]),
    ties: true,
    seed: () => (spec.seededElsewhere ? Promise.resolve() : insert(`FROM generate_series(1, ${SEED}) n`, spread("n"), "n::text")),
    present: async () => new Set((await db<{ id: string }>(`SELECT ${spec.idColumn}::text AS id FROM ${spec.table} WHERE ${spec.scope()}`)).map((r) => r.id)),
    add: async (place) => insert("", await placedAt(spec.table, spec.timeColumn, spec.scope(), place), `'${randomUUID()}'`),
    ...(spec.auth ? { auth: spec.auth } : {}),
    ...(spec.maxLimit ? { maxLimit: spec.maxLimit } : {})
  }
}

const CONTENT = `'{"type":"text","text":"hi","suggestions":[]}'`
/** A campaign's content as the campaign reads present it (its template as given, the definition, the category). */
const CAMPAIGN_CONTENT = `'{"data":{"name":"offer","languageCode":"en"},"definition":{"name":"offer","language":"en","category":"MARKETING","components":[]},"category":"MARKETING"}'`
const ofAccount = () => `account_id = '${ids.account}'`

const LISTS: ReadonlyArray<ListUnderTest> = [
  byTime({
    route: "/api/v1/public/templates",
    url: () => "/api/v1/public/templates",
    field: "templates",
    idField: "id",
    timeField: "created_at",
    table: "wa_templates",
    idColumn: "template_id",
    timeColumn: "created_at",
    scope: () => `${ofAccount()} AND deleted_at IS NULL`,
    columns: "account_id, waba_id, name, language, category, kind, components, status",
    values: (n) => `'${ids.account}', 'waba', 'row_' || md5(${n}), 'en', 'UTILITY', 'text', '[{"type":"BODY","text":"Hello"}]', 'APPROVED'`,
    auth: () => `Basic ${ids.secretKey}`
  }),
  byTime({
    route: "/api/v1/app/integrations/logs",
    url: () => "/api/v1/app/integrations/logs",
    field: "logs",
    idField: "id",
    timeField: "created_at",
    table: "integration_logs",
    idColumn: "log_id",
    timeColumn: "created_at",
    scope: () => ofAccount(),
    columns: "account_id, integration, status_code, outcome, attempt, took_ms, events",
    values: () => `'${ids.account}', 'meta_capi', 200, 'delivered', 1, 5, 1`,
    auth: () => `Bearer ${ids.secretKey}`
  }),
  ...(["/api/v1/app/contacts", "/api/v1/app/segments/{id}/contacts"] as const).map((route, i) =>
    byTime({
      route,
      url: () => route.replace("{id}", ids.segment),
      field: "contacts",
      idField: "id",
      timeField: "created_at",
      table: "customers",
      idColumn: "customer_id",
      timeColumn: "created_at",
      scope: () => ofAccount(),
      columns: "account_id, phone",
      // Distinct phones, not checked by the table.
      values: (n) => `'${ids.account}', '+1' || md5(${n})`,
      auth: () => `Bearer ${ids.secretKey}`,
      // The segment (no filters) holds every customer: the contacts list seeds them.
      seededElsewhere: i === 1
    })),
  byTime({
    route: "/api/v1/app/segments",
    url: () => "/api/v1/app/segments",
    field: "segments",
    idField: "id",
    timeField: "created_at",
    table: "segments",
    idColumn: "segment_id",
    timeColumn: "created_at",
    scope: () => ofAccount(),
    columns: "account_id, name",
    values: (n) => `'${ids.account}', 'segment ' || md5(${n})`,
    auth: () => `Bearer ${ids.secretKey}`,
    maxLimit: 100
  }),
  byTime({
    route: "/api/v1/app/ai-agents",
    url: () => "/api/v1/app/ai-agents",
    field: "ai_agents",
    idField: "id",
    timeField: "created_at",
    table: "ai_agents",
    idColumn: "agent_id",
    timeColumn: "created_at",
    scope: () => ofAccount(),
    columns: "account_id, name",
    values: (n) => `'${ids.account}', 'agent ' || md5(${n})`,
    auth: () => `Bearer ${ids.secretKey}`,
    maxLimit: 100
  }),
  byTime({
    route: "/api/v1/rcs/templates",
    url: () => "/api/v1/rcs/templates",
    field: "templates",
    idField: "template_id",
    timeField: "created_at",
    table: "templates",
    idColumn: "template_id",
    timeColumn: "created_at",
    scope: () => `${ofAccount()} AND deleted_at IS NULL`,
    columns: "account_id, bot_id, name, type, content, status",
    values: (n) => `'${ids.account}', '${ids.bot}', 'row ' || ${n}, 'text', ${CONTENT}, 'approved'`
  }),
  byTime({
    route: "/api/v1/rcs/reports/messages",
    url: () => "/api/v1/rcs/reports/messages",
    field: "messages",
    idField: "message_id",
    timeField: "created_at",
    table: "messages",
    idColumn: "message_id",
    timeColumn: "created_at",
    scope: ofAccount,
    columns: "message_id, account_id, bot_id, recipient, content, source, status, price",
    values: () => `gen_random_uuid(), '${ids.account}', '${ids.bot}', '+919876541234', ${CONTENT}, 'api', 'sent', 0.1`
  }),
  byTime({
    route: "/api/v1/rcs/wallet",
    url: () => "/api/v1/rcs/wallet",
    field: "transactions",
    idField: "txn_id",
    timeField: "created_at",
    table: "wallet_transactions",
    idColumn: "txn_id",
    timeColumn: "created_at",
    scope: ofAccount,
    columns: "account_id, kind, amount, reference",
    values: (n) => `'${ids.account}', 'charge', 0.1, 'row-' || ${n}`
  }),
  byTime({
    route: "/api/v1/rcs/auto-replies/{bot_id}/fires",
    url: () => `/api/v1/rcs/auto-replies/${ids.bot}/fires`,
    field: "fires",
    idField: "fire_id",
    timeField: "fired_at",
    table: "auto_reply_fires",
    idColumn: "fire_id",
    timeColumn: "fired_at",
    scope: () => `bot_id = '${ids.bot}'`,
    columns: "rule_id, account_id, bot_id, recipient, inbound_text, inbound_id, message_id",
    values: (n) => `gen_random_uuid(), '${ids.account}', '${ids.bot}', '+919876541234', 'hi', 'row-' || ${n}, gen_random_uuid()`
  }),
  byTime({
    route: "/api/v1/rcs/contact-lists",
    url: () => "/api/v1/rcs/contact-lists",
    field: "lists",
    idField: "list_id",
    timeField: "created_at",
    table: "contact_lists",
    idColumn: "list_id",
    timeColumn: "created_at",
    scope: () => `${ofAccount()} AND deleted_at IS NULL`,
    columns: "account_id, name",
    values: (n) => `'${ids.account}', 'row ' || ${n}`
  }),
  byTime({
    route: "/api/v1/rcs/broadcasts",
    url: () => "/api/v1/rcs/broadcasts",
    field: "broadcasts",
    idField: "id",
    timeField: "created_at",
    table: "broadcasts",
    idColumn: "broadcast_id",
    timeColumn: "created_at",
    // Campaigns live in the same table (channel whatsapp) and are another list.
    scope: () => `${ofAccount()} AND channel = 'rcs'`,
    columns: "account_id, bot_id, template_id, list_id, name, content, price, status",
    values: (n) => `'${ids.account}', '${ids.bot}', gen_random_uuid(), '${ids.list}', 'row ' || ${n}, ${CONTENT}, 0.1, 'completed'`
  }),
  // WhatsApp campaigns, the same rows under both surfaces that take a secret key.
  ...(["public", "app"] as const).map((surface, i) =>
    byTime({
      route: `/api/v1/${surface}/campaigns`,
      url: () => `/api/v1/${surface}/campaigns`,
      field: "campaigns",
      idField: "id",
      timeField: "created_at",
      table: "broadcasts",
      idColumn: "broadcast_id",
      timeColumn: "created_at",
      scope: () => `${ofAccount()} AND channel = 'whatsapp'`,
      columns: "account_id, channel, phone_number_id, template_id, name, content, audience, price, status",
      values: (n) => `'${ids.account}', 'whatsapp', '${ids.number}', gen_random_uuid(), 'row ' || ${n}, ${CAMPAIGN_CONTENT}, '{"kind":"customers","ids":[]}', 0.8, 'completed'`,
      auth: () => `${surface === "public" ? "Basic" : "Bearer"} ${ids.secretKey}`,
      seededElsewhere: i === 1
    })),
  ...(["public", "app"] as const).map((surface, i): ListUnderTest => ({
    route: `/api/v1/${surface}/campaigns/{id}/targets`,
    url: () => `/api/v1/${surface}/campaigns/${ids.campaign}/targets`,
    field: "targets",
    id: (r) => String(r.target_no),
    key: (r) => r.target_no,
    ties: false,
    // Even numbers only, so rows can be added between them; the app's list reads the same rows.
    seed: () =>
      i === 1 ? Promise.resolve() : db(`INSERT INTO broadcast_targets (broadcast_id, target_no, phone, message_id, customer_id)
          SELECT $1, n * 2, '+919876541234', gen_random_uuid(), gen_random_uuid() FROM generate_series(0, ${SEED - 1}) n`, [ids.campaign]).then(() => undefined),
    present: async () => new Set((await db<{ id: string }>("SELECT target_no::text AS id FROM broadcast_targets WHERE broadcast_id = $1", [ids.campaign])).map((r) => r.id)),
    add: async (place) => {
      const at = place === "top" ? "(SELECT max(target_no) + 1 FROM broadcast_targets WHERE broadcast_id = $1)" : `${1 + 2 * Math.floor(Math.random() * SEED)}`
      await db(`INSERT INTO broadcast_targets (broadcast_id, target_no, phone, message_id, customer_id) SELECT $1, ${at}, '+919876541234', gen_random_uuid(), gen_random_uuid() ON CONFLICT DO NOTHING`, [ids.campaign])
    },
    auth: () => `${surface === "public" ? "Basic" : "Bearer"} ${ids.secretKey}`
  })),
  {
    route: "/api/v1/rcs/contact-lists/{list_id}/contacts",
    url: () => `/api/v1/rcs/contact-lists/${ids.importList}/contacts`,
    field: "contacts",
    id: (r) => r.contact_id,
    key: (r) => Number(r.contact_id),
    ties: false,
    // Through the import itself: contact ids run from 1 across 999 → 1000, where text order and
    // number order part. Every other one is then removed, so rows can be added between them.
    seed: async () => {
      const contacts = Array.from({ length: 2 * SEED }, (_, i) => ({ phone: `+9198${String(i).padStart(8, "0")}` }))
      const r = await callJson(node.url, "POST", `/api/v1/rcs/contact-lists/${ids.importList}/contacts`, token, { contacts })
      expect(r.body.added, JSON.stringify(r.body).slice(0, 300)).toBe(2 * SEED)
      await db("DELETE FROM contacts WHERE list_id = $1 AND contact_id % 2 = 1", [ids.importList])
    },
    present: async () => new Set((await db<{ id: string }>("SELECT contact_id::text AS id FROM contacts WHERE list_id = $1", [ids.importList])).map((r) => r.id)),
    add: async (place) => {
      // A new contact takes the next id (the top); "tie" and "middle" take a free odd id below it.
      const phone = `+9197${String(Math.floor(Math.random() * 1e8)).padStart(8, "0")}`
      if (place === "top") {
        await db("INSERT INTO contacts (list_id, phone) VALUES ($1, $2) ON CONFLICT DO NOTHING", [ids.importList, phone])
        return
      }
      await db(
        "INSERT INTO contacts (list_id, contact_id, phone) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        [ids.importList, 1 + 2 * Math.floor(Math.random() * SEED), phone]
      )
    }
  },
  {
    route: "/api/v1/rcs/broadcasts/{id}/targets",
    url: () => `/api/v1/rcs/broadcasts/${ids.broadcast}/targets`,
    field: "targets",
    id: (r) => String(r.target_no),
    key: (r) => r.target_no,
    ties: false,
    // Even numbers only, so rows can be added between them.
    seed: () =>
      db(`INSERT INTO broadcast_targets (broadcast_id, target_no, phone, message_id)
          SELECT $1, n * 2, '+919876541234', gen_random_uuid() FROM generate_series(0, ${SEED - 1}) n`, [ids.broadcast]).then(() => undefined),
    present: async () => new Set((await db<{ id: string }>("SELECT target_no::text AS id FROM broadcast_targets WHERE broadcast_id = $1", [ids.broadcast])).map((r) => r.id)),
    add: async (place) => {
      const at = place === "top" ? "(SELECT max(target_no) + 1 FROM broadcast_targets WHERE broadcast_id = $1)" : `${1 + 2 * Math.floor(Math.random() * SEED)}`
      await db(`INSERT INTO broadcast_targets (broadcast_id, target_no, phone, message_id) SELECT $1, ${at}, '+919876541234', gen_random_uuid() ON CONFLICT DO NOTHING`, [ids.broadcast])
    }
  }
]

/** Walks `list` from its first page with the given page sizes (cycled), adding rows after each page. */
const walk = async (list: ListUnderTest, limits: ReadonlyArray<number>, additions: ReadonlyArray<ReadonlyArray<Place>>) => {
  const rows: Array<any> = []
  let cursor = ""
  for (let page = 0;; page++) {
    const limit = Math.min(limits[page % limits.length]!, list.maxLimit ?? 1000)
    const r = await callJson(node.url, "GET", `${list.url()}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, list.auth?.() ?? token)
    if (r.status !== 200) throw new Error(`${list.route} page ${page}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`)
    const got = r.body[list.field] as Array<any>
    if (got.length > limit) throw new Error(`${list.route}: ${got.length} rows for limit ${limit}`)
    rows.push(...got)
    cursor = r.body.next_cursor ?? ""
    if (cursor === "") return rows
    if (page > 5 * SEED) throw new Error(`${list.route}: the walk does not end`)
    // Rows are added after the first pages only: added after every page, three rows ahead of a
    // one-row page would keep the walk from ever ending.
    for (const place of additions[page] ?? []) await list.add(place)
  }
}

beforeAll(async () => {
  node = await startHerald(env)
  ids.account = (await cli("admin", "create-account", "--email", "pages@example.com", "--password", "pages password", "--label", "Pages")).account_id
  ids.bot = (await cli("admin", "create-bot", ids.account, "--name", "Pages", "--status", "active")).bot_id
  token = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "pages@example.com", password: "pages password" })).body.token
  // The public API's lists take the secret key, on a plan whose bucket a walk does not empty.
  await cli("admin", "set-plan", ids.account, "enterprise", "--rate", "1000000")
  ids.secretKey = (await callJson(node.url, "POST", "/api/v1/app/developer/secret-key", token)).body.secret_key
  ids.importList = (await callJson(node.url, "POST", "/api/v1/rcs/contact-lists", token, { name: "imported" })).body.list.list_id
  ids.list = ids.importList
  const [b] = await db<{ id: string }>(
    `INSERT INTO broadcasts (account_id, bot_id, template_id, list_id, name, content, price, status)
     VALUES ($1, $2, gen_random_uuid(), $3, 'targets', '{"type":"text","text":"hi","suggestions":[]}', 0.1, 'completed') RETURNING broadcast_id::text AS id`,
    [ids.account, ids.bot, ids.list]
  )
  ids.broadcast = b!.id
  ids.number = (await cli("admin", "create-wa-number", ids.account, "--phone", "+919800000501")).phone_number_id
  const [c] = await db<{ id: string }>(
    `INSERT INTO broadcasts (account_id, channel, phone_number_id, template_id, name, content, audience, price, status)
     VALUES ($1, 'whatsapp', $2, gen_random_uuid(), 'targets', ${CAMPAIGN_CONTENT}, '{"kind":"customers","ids":[]}', 0.8, 'completed') RETURNING broadcast_id::text AS id`,
    [ids.account, ids.number]
  )
  ids.campaign = c!.id
  // A segment without filters: its members are every customer of the account.
  ids.segment = (await callJson(node.url, "POST", "/api/v1/app/segments", `Bearer ${ids.secretKey}`, { name: "everyone" })).body.segment.id
  for (const list of LISTS) await list.seed()
}, 300_000)
afterAll(() => node?.kill())

describe("cursor-paged lists", () => {
  it("covers every GET of the OpenAPI document that takes a cursor", () => {
    const doc = OpenApi.fromApi(HeraldApi) as any
    const paged = Object.entries<any>(doc.paths).flatMap(([path, ops]) =>
      ops.get?.parameters?.some((p: any) => p.in === "query" && p.name === "cursor") ? [path] : []
    )
    expect(paged.sort()).toEqual(LISTS.map((l) => l.route).sort())
  })

  describe("signed cursors", () => {
    /** A list's first page of one row, with `cursor` when given: the answer. */
    const pageOf = (list: ListUnderTest, cursor = "") =>
      callJson(node.url, "GET", `${list.url()}?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, list.auth?.() ?? token)
    const firstCursor = async (list: ListUnderTest) => {
      const first = await pageOf(list)
      expect(first.status, JSON.stringify(first.body)).toBe(200)
      expect(first.body.next_cursor, list.route).toMatch(/\S/)
      return first.body.next_cursor as string
    }
    /** What a cursor carries, and the cursor with its last value edited under the same signature (still well formed). */
    const [body, signature] = [(c: string) => c.split(".")[0]!, (c: string) => c.split(".")[1] ?? ""]
    const edited = (cursor: string) => {
      const values = JSON.parse(Buffer.from(body(cursor), "base64url").toString("utf8")) as Array<string | number>
      const last = values[values.length - 1]!
      values[values.length - 1] = typeof last === "number" ? last - 1 : `${last.slice(0, -1)}${last.endsWith("1") ? "2" : "1"}`
      return `${Buffer.from(JSON.stringify(values)).toString("base64url")}.${signature(cursor)}`
    }
    const refusedCursor = (r: { status: number; body: any }, what: string) => {
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(400)
      expect(r.body.code, what).toBe("invalid_request")
      expect(r.body.errors[0].path, what).toBe("cursor")
    }
    const other = (list: ListUnderTest) => LISTS.find((l) => l.route === (list.route === "/api/v1/rcs/wallet" ? "/api/v1/public/templates" : "/api/v1/rcs/wallet"))!

    for (const list of LISTS) {
      it(`${list.route}: the cursor as given pages; edited, unsigned, or another list's is 400 invalid_request`, async () => {
        const cursor = await firstCursor(list)
        expect((await pageOf(list, cursor)).status).toBe(200)
        for (const [what, bad] of [["edited", edited(cursor)], ["unsigned", body(cursor)], ["another list's", await firstCursor(other(list))]]) {
          refusedCursor(await pageOf(list, bad), `${list.route} ${what}`)
        }
      })
    }

    it("POST /api/v1/public/customers/search: the same", async () => {
      const search = (cursor?: string) => callJson(node.url, "POST", "/api/v1/public/customers/search", `Basic ${ids.secretKey}`, { limit: 1, ...(cursor ? { cursor } : {}) })
      const cursor = (await search()).body.next_cursor as string
      expect((await search(cursor)).status).toBe(200)
      for (const [what, bad] of [["edited", edited(cursor)], ["unsigned", body(cursor)], ["another list's", await firstCursor(other(LISTS[0]!))]]) {
        refusedCursor(await search(bad), `customers/search ${what}`)
      }
    })
  })

  const limit = fc.oneof(fc.constantFrom(1, 7, 100, 999, 1000), fc.integer({ min: 2, max: 400 }))
  const place = fc.constantFrom<Place>("top", "tie", "middle")

  for (const list of LISTS) {
    it(`${list.route} walks without gaps or repeats while rows are added`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(limit, { minLength: 1, maxLength: 4 }),
          fc.array(fc.array(place, { maxLength: 3 }), { maxLength: 5 }),
          async (limits, additions) => {
            const before = await list.present()
            expect(before.size).toBeGreaterThanOrEqual(SEED)
            const rows = await walk(list, limits, additions)
            const seen = rows.map(list.id)
            const repeated = seen.filter((id, i) => seen.indexOf(id) !== i)
            expect(repeated, "rows returned twice").toEqual([])
            const walked = new Set(seen)
            expect([...before].filter((id) => !walked.has(id)), "rows never returned").toEqual([])
            for (let i = 1; i < rows.length; i++) {
              const [previous, current] = [list.key(rows[i - 1]), list.key(rows[i])]
              if (list.ties ? current > previous : current >= previous) throw new Error(`${list.route}: row ${i} (${current}) out of order after ${previous}`)
            }
          }
        ),
        // Small pages over 1,200 rows cost a few hundred requests a run.
        { numRuns: RUNS, endOnFailure: true }
      )
    }, 180_000)
  }
})
