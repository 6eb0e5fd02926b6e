// The partner e-mail API (docs/partner-email.md), two rows, each with its yardstick from the same run:
//   (a) e-mails/s from POST /api/v1/partner/email/emails to the SMTP sink's acceptance: a partner
//       with production access and its quotas out of the way, a sender at a verified domain (so
//       DKIM-signed), one recipient per e-mail, COUNT e-mails with IN_FLIGHT requests open; the
//       clock runs from the first POST to the sink's `accepted` reaching COUNT. Floor: nodemailer
//       straight to the same sink (src/gateway/smtp/NodemailerRelay.ts, the pooled transport the
//       mailer uses, at the mailer's 32 transactions in flight), the same mails DKIM-signed with a
//       2048-bit key like a domain's. Ratio = herald / floor, target ≥ 0.5.
//   (b) a walk of 1,000,000 events (written straight into email_events with generate_series,
//       three rows per created_at) by cursor, GET /api/v1/partner/email/events?limit=1000 through
//       the real server: p50/p99 of the first and the last 50 pages; flat = p99(last) / p99(first),
//       target ≤ 1.5.
// One herald process (serve, role all; the SMTP sink in-process, its control API on the gateway
// simulator's port), the bench's own client in this process, Postgres and NATS, all on this
// machine. Prints one JSON line.
//   npm run bench -- email    (COUNT=5000 IN_FLIGHT=256 EVENTS=1000000; PROFILE=<dir>: Herald
//   writes a V8 CPU profile there (it is stopped, not killed, at the end); ONLY=send or ONLY=walk)
import { Effect } from "effect"
import { generateKeyPairSync, randomUUID } from "node:crypto"
import Pg from "pg"
import { Agent, request } from "undici"
import type { OutgoingMail } from "../src/gateway/mail.ts"
import { makeNodemailerRelay } from "../src/gateway/smtp/NodemailerRelay.ts"
import { heraldEntry, startHerald } from "../test/support/HeraldProcess.ts"
import { cliFor } from "../test/support/http.ts"
import { cleanup, envFor, makeIsolation } from "../test/support/isolation.ts"
import { freePort } from "../test/support/TcpProxy.ts"
import { round2 } from "./support/figures.ts"

const COUNT = Number(process.env.COUNT ?? 5_000)
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 256)
const EVENTS = Number(process.env.EVENTS ?? 1_000_000)
const WARMUP = 200
/** The mailer's relay transactions in flight within a flush (src/email/MailerKind.ts). */
const RELAY_CONCURRENCY = 32
const PAGE = 1_000
const EDGE_PAGES = 50
const PROFILE = process.env.PROFILE
const ONLY = process.env.ONLY

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}
const ms = (n: number) => Math.round(n * 10) / 10

const iso = makeIsolation()
const simPort = await freePort()
const smtpPort = await freePort()
const env = envFor(iso, { LOG_LEVEL: "warning", GATEWAY_SIM_PORT: String(simPort), SMTP_SIM_PORT: String(smtpPort) })
const cli = cliFor(env)
const node = await startHerald(env, PROFILE === undefined ? {} : { entry: { argv: ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, ...heraldEntry.argv, "serve"] } })
const simUrl = `http://127.0.0.1:${simPort}`
const smtpUrl = `smtp://127.0.0.1:${smtpPort}`
const agent = new Agent({ connections: IN_FLIGHT, pipelining: 1 })
const db = new Pg.Client({ connectionString: iso.databaseUrl })

/** A JSON call to the node through the bench's pool: status and parsed body. */
const call = async (method: "GET" | "POST", path: string, key: string, body?: unknown) => {
  const r = await request(`${node.url}/api/v1/partner/email${path}`, {
    method,
    dispatcher: agent,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await r.body.text()
  return { status: r.statusCode, body: (text.startsWith("{") ? JSON.parse(text) : {}) as any }
}
const sinkAccepted = async () => ((await (await fetch(`${simUrl}/simulate/smtp/stats`)).json()) as { accepted: number; duplicates: number }).accepted
const untilAccepted = async (n: number, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const accepted = await sinkAccepted()
    if (accepted >= n) return performance.now()
    if (Date.now() > deadline) throw new Error(`the sink accepted ${accepted} of ${n} within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** A partner out of the sandbox with its quotas out of the way, sending from a verified domain. */
const partner = async (name: string, domain: string) => {
  const created = await cli("admin", "create-partner", "--name", name)
  await cli("admin", "email-production-access", created.partner_id, "grant")
  await cli("admin", "email-quota", created.partner_id, "--daily", "100000000", "--rate", "100000")
  const identity = await call("POST", "/identities", created.api_key, { identity: domain })
  if (identity.status !== 200) throw new Error(`identity: ${identity.status} ${JSON.stringify(identity.body)}`)
  await cli("admin", "email-identity-verify", identity.body.id)
  return { id: created.partner_id as string, key: created.api_key as string }
}

const mailBody = (i: number, tag: string) => ({ from: "news@bench.test", to: [`${tag}${i}@inbox.test`], subject: `Bench ${tag} ${i}`, text: `Hello ${i}, this is a benchmark e-mail.` })

/** n sends, IN_FLIGHT at a time: the answers by status. */
const postAll = async (key: string, n: number, tag: string) => {
  const statuses: Record<string, number> = {}
  let next = 0
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, n) }, async () => {
    while (next < n) {
      const i = next++
      const r = await call("POST", "/emails", key, mailBody(i, tag))
      statuses[r.status] = (statuses[r.status] ?? 0) + 1
    }
  }))
  return statuses
}

/** Herald: COUNT e-mails from the first POST to the sink's acceptance of the last. */
const heraldSends = async (key: string) => {
  const before = await sinkAccepted()
  const started = performance.now()
  const posting = postAll(key, COUNT, "h")
  const statuses = await posting
  const posted = performance.now()
  const done = await untilAccepted(before + COUNT, 600_000)
  const seconds = (done - started) / 1000
  return {
    emails: COUNT,
    seconds: round2(seconds),
    per_second: Math.round(COUNT / seconds),
    posts_answered_after_s: round2((posted - started) / 1000),
    post_answers: statuses
  }
}

/** The floor: the same mails through nodemailer's pooled transport straight to the sink, DKIM-signed. */
const floorSends = (n: number, tag: string) => {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, publicKeyEncoding: { type: "spki", format: "pem" }, privateKeyEncoding: { type: "pkcs8", format: "pem" } })
  const dkim = { domainName: "bench.test", keySelector: "bench", privateKey }
  const mails: Array<OutgoingMail> = Array.from({ length: n }, (_, i) => {
    const body = mailBody(i, tag)
    return { messageId: randomUUID(), from: body.from, recipient: body.to[0]!, to: body.to, cc: [], replyTo: [], subject: body.subject, text: body.text, dkim }
  })
  return Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const relay = yield* makeNodemailerRelay(smtpUrl)
    const started = performance.now()
    const outcomes = yield* Effect.forEach(mails, relay.send, { concurrency: RELAY_CONCURRENCY })
    const seconds = (performance.now() - started) / 1000
    const refused = outcomes.filter((o) => o._tag !== "Accepted")
    if (refused.length > 0) throw new Error(`floor: ${refused.length} not accepted, e.g. ${JSON.stringify(refused[0])}`)
    return { emails: n, seconds: round2(seconds), per_second: Math.round(n / seconds) }
  })))
}

/** EVENTS rows for the partner, newest first by (created_at, event_id), three to a timestamp. */
const insertEvents = async (partnerId: string) => {
  const started = performance.now()
  const chunk = 250_000
  for (let from = 0; from < EVENTS; from += chunk) {
    await db.query(
      `INSERT INTO email_events (event_id, partner_id, message_id, type, recipient, detail, created_at)
       SELECT gen_random_uuid(), $1::uuid, md5('walk' || (g / 4))::uuid, (ARRAY['SEND', 'DELIVERY'])[1 + g % 2],
              'walk' || g || '@inbox.test', '250 2.0.0 accepted', timestamptz '2026-01-01 00:00:00Z' + (g / 3) * interval '1 millisecond'
       FROM generate_series($2::int, $3::int) g`,
      [partnerId, from, Math.min(EVENTS, from + chunk) - 1]
    )
  }
  await db.query("ANALYZE email_events")
  return round2((performance.now() - started) / 1000)
}

/** Every page by cursor, each timed from request to parsed body; checks the order and the count. */
const walk = async (key: string) => {
  const latencies: Array<number> = []
  let cursor: string | undefined
  let rows = 0
  let previous: { created_at: string; event_id: string } | undefined
  const started = performance.now()
  do {
    const t0 = performance.now()
    const page = await call("GET", `/events?limit=${PAGE}${cursor === undefined ? "" : `&next_cursor=${encodeURIComponent(cursor)}`}`, key)
    latencies.push(performance.now() - t0)
    if (page.status !== 200) throw new Error(`events page ${latencies.length}: ${page.status} ${JSON.stringify(page.body).slice(0, 300)}`)
    const events = page.body.events as Array<{ created_at: string; event_id: string }>
    const first = events[0]
    if (previous !== undefined && first !== undefined &&
      !(first.created_at < previous.created_at || (first.created_at === previous.created_at && first.event_id < previous.event_id))) {
      throw new Error(`page ${latencies.length} does not follow the one before: ${JSON.stringify(previous)} then ${JSON.stringify(first)}`)
    }
    previous = events.at(-1)
    rows += events.length
    cursor = page.body.next_cursor
  } while (cursor !== undefined)
  if (rows !== EVENTS) throw new Error(`walked ${rows} events of ${EVENTS}`)
  const firstPages = latencies.slice(0, EDGE_PAGES)
  const lastPages = latencies.slice(-EDGE_PAGES)
  const firstP99 = percentile(firstPages, 99)
  const lastP99 = percentile(lastPages, 99)
  return {
    events: rows,
    pages: latencies.length,
    seconds: round2((performance.now() - started) / 1000),
    first_p50_ms: ms(percentile(firstPages, 50)),
    first_p99_ms: ms(firstP99),
    last_p50_ms: ms(percentile(lastPages, 50)),
    last_p99_ms: ms(lastP99),
    all_p50_ms: ms(percentile(latencies, 50)),
    all_p99_ms: ms(percentile(latencies, 99)),
    flat: round2(lastP99 / firstP99),
    target: 1.5,
    // flat only catches pages getting slower with depth; a walk whose first pages are the slow
    // ones (each page paying for the rows after it) shows here.
    spread: round2(Math.max(firstP99, lastP99) / Math.min(firstP99, lastP99))
  }
}

try {
  await db.connect()
  let send: Record<string, unknown> = {}
  if (ONLY === undefined || ONLY === "send") {
    const sender = await partner("bench sender", "bench.test")
    // Warm-up, both ways: the mailer activated, statements prepared, the JIT through both paths.
    const warm = await sinkAccepted()
    await postAll(sender.key, WARMUP, "w")
    await untilAccepted(warm + WARMUP, 120_000)
    await floorSends(WARMUP, "fw")
    const floor = await floorSends(COUNT, "f")
    const herald = await heraldSends(sender.key)
    const [{ n: delivered }] = (await db.query(
      "SELECT count(*)::int AS n FROM email_messages WHERE partner_id = $1 AND status = 'DELIVERED' AND subject LIKE 'Bench h %'",
      [sender.id]
    )).rows
    send = {
      emails_per_s: herald.per_second,
      floor_per_s: floor.per_second,
      ratio: round2(herald.per_second / floor.per_second),
      target: 0.5,
      herald: { ...herald, delivered_rows_when_sink_done: delivered },
      floor
    }
  }
  let eventsWalk: Record<string, unknown> = {}
  if (ONLY === undefined || ONLY === "walk") {
    const walker = await partner("bench walker", "walk.test")
    const insertSeconds = await insertEvents(walker.id)
    eventsWalk = { events_walk: { ...await walk(walker.key), insert_s: insertSeconds } }
  }
  console.log(JSON.stringify({
    bench: "email",
    count: COUNT,
    in_flight: IN_FLIGHT,
    ...send,
    ...eventsWalk,
    note: "emails_per_s: COUNT sends (one recipient each, DKIM-signed from a verified domain) from the first POST /emails to the in-process SMTP sink's accepted count reaching them; floor: the same mails through makeNodemailerRelay (pooled, 8 connections) at 32 in flight straight to the same sink; events_walk: GET /events?limit=1000 by next_cursor over EVENTS rows of one partner (three per created_at), each page timed request to parsed body, flat = p99(last 50) / p99(first 50), spread = the larger of the two p99 over the smaller; one herald process (serve, role all), the bench client, Postgres and NATS on the same machine"
  }))
} catch (error) {
  // What the node printed (warnings and worse) tells why a run broke.
  process.stderr.write(`herald's output (tail):\n${node.output().slice(-4000)}\n`)
  throw error
} finally {
  await (PROFILE === undefined ? node.kill() : node.stop()) // stopped, not killed, so the profile is written
  await agent.close()
  await db.end().catch(() => {})
  await cleanup(iso)
}
process.exit(0)
