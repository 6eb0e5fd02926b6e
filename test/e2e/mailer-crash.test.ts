import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald, startSmtpSim } from "../support/HeraldProcess.ts"
import { callJson, cliFor } from "../support/http.ts"
import { envFor } from "../support/isolation.ts"
import { freePort } from "../support/TcpProxy.ts"

// kill -9 of the worker running a partner's `mailer` while it relays a backlog (src/email/MailerKind.ts):
// the recipients it had out (committed as `sending` by the dead process) are relayed again by the
// next owner with the same Message-ID; the SMTP sink (a separate `herald smtp-sim`) records each recipient's
// mail once and counts the repeats in `duplicates`. Every message ends DELIVERED with one SEND and
// one DELIVERY per recipient.

const MESSAGES = 300
const RECIPIENTS_EACH = 3
const TOTAL = MESSAGES * RECIPIENTS_EACH
const IN_FLIGHT = 32
/** Recipients the sink has taken when the worker is killed. */
const KILL_AT = 60

const iso = useIsolation()
const db = useDb(iso)
const base = envFor(iso, { LOG_LEVEL: "warning", HERALD_EMAIL_RETRY_BASE_MS: "200" })
const cli = cliFor(base)
let api: HeraldProcess
let victim: HeraldProcess
let survivor: HeraldProcess | undefined
let sink: Awaited<ReturnType<typeof startSmtpSim>>
let nodeEnv: Record<string, string>

interface SinkStats {
  readonly accepted: number
  readonly duplicates: number
  readonly bounced: number
  readonly deferred: number
  readonly rejected: number
  readonly complaints: number
}
const stats = async () => (await (await fetch(`${sink.url}/simulate/smtp/stats`)).json()) as SinkStats
const received = async (to: string) =>
  ((await (await fetch(`${sink.url}/simulate/smtp/messages?to=${encodeURIComponent(to)}`)).json()) as {
    messages: Array<{ to: Array<string>; headers: Record<string, string> }>
  }).messages

/** `f` over `items`, `n` at a time. */
const pool = async <A, B>(items: ReadonlyArray<A>, n: number, f: (a: A, i: number) => Promise<B>): Promise<Array<B>> => {
  const out: Array<B> = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await f(items[i]!, i)
    }
  }))
  return out
}

beforeAll(async () => {
  const apiPort = await freePort()
  sink = await startSmtpSim(await freePort(), await freePort(), `http://127.0.0.1:${apiPort}`, base)
  nodeEnv = { ...base, SMTP_URL: sink.smtpUrl }
  api = await startHerald({ ...nodeEnv, PORT: String(apiPort), HERALD_ROLE: "api" })
  victim = await startHerald({ ...nodeEnv, HERALD_ROLE: "worker" })
})
afterAll(async () => {
  await Promise.all([api, victim, survivor].map((n) => n?.kill()))
  await sink?.kill()
})

describe("a worker killed while its mailer relays a backlog", () => {
  it("loses no e-mail and has none recorded twice by the sink", async () => {
    const { partner_id: partner, api_key: key } = await cli("admin", "create-partner", "--name", "crash partner")
    await cli("admin", "email-production-access", partner, "grant")
    await cli("admin", "email-quota", partner, "--daily", "100000", "--rate", "200")
    const call = (method: string, path: string, body?: unknown) => callJson(api.url, method, `/api/v1/partner/email${path}`, key, body)
    const domain = await call("POST", "/identities", { identity: "crash.test" })
    expect(domain.status).toBe(200)
    await cli("admin", "email-identity-verify", domain.body.id)

    const recipientsOf = (i: number) => Array.from({ length: RECIPIENTS_EACH }, (_, j) => `r${i}-${j}@inbox.test`)
    // Sends go on while the worker dies: a send whose mailer was on it answers 503 (the mailer did
    // not answer in time; the send may still go out), and its command is still there for the next owner.
    const started = Date.now()
    const sending = pool(Array.from({ length: MESSAGES }, (_, i) => i), IN_FLIGHT, async (i) => {
      const sent = await call("POST", "/emails", { from: "news@crash.test", to: recipientsOf(i), subject: `m${i}`, text: `mail ${i}` })
      if (sent.status === 503) return undefined
      expect(sent.status, JSON.stringify(sent.body)).toBe(202)
      return sent.body.message_id as string
    })
    // Awaited below; a failure meanwhile is not an unhandled rejection.
    sending.catch(() => {})

    // Some relayed, most still to go: the worker dies in the middle of the backlog.
    const atKill = await eventually(async () => {
      const s = await stats()
      expect(s.accepted).toBeGreaterThanOrEqual(KILL_AT)
      return s
    }, { timeoutMs: 30_000, intervalMs: 10 })
    await victim.kill()
    const killedAfterMs = Date.now() - started
    const afterKill = await stats()
    // What the dead worker had committed of the relay's answers (the rest is relayed again).
    const [committed] = await db<{ n: number }>("SELECT count(*)::int AS n FROM email_events WHERE type = 'DELIVERY'")
    expect(afterKill.accepted).toBeLessThan(TOTAL / 2)
    survivor = await startHerald({ ...nodeEnv, HERALD_ROLE: "worker" })
    const answered = await sending
    const sentMs = Date.now() - started

    await eventually(async () => {
      const [row] = await db<{ n: number }>("SELECT count(*)::int AS n FROM email_messages WHERE status = 'DELIVERED'")
      expect(row!.n).toBe(MESSAGES)
    }, { timeoutMs: 60_000, intervalMs: 250 })
    // Every send is there once, the ones answered 503 too.
    const stored = await db<{ subject: string; id: string }>("SELECT subject, message_id::text AS id FROM email_messages")
    expect(stored).toHaveLength(MESSAGES)
    const bySubject = new Map(stored.map((r) => [r.subject, r.id]))
    const ids = answered.map((id, i) => {
      if (id !== undefined) expect(bySubject.get(`m${i}`)).toBe(id)
      return bySubject.get(`m${i}`)!
    })
    expect(new Set(ids).size).toBe(MESSAGES)
    const rows = await pool(ids, 16, async (id) => (await call("GET", `/emails/${id}`)).body)
    await pool(rows, 16, async (row, i) => {
      expect(row).toMatchObject({ message_id: ids[i], status: "DELIVERED" })
      const events = row.events as Array<{ type: string; recipient: string | null }>
      expect(events.filter((e) => e.type === "SEND")).toHaveLength(1)
      const deliveries = events.filter((e) => e.type === "DELIVERY").map((e) => e.recipient).sort()
      expect(deliveries).toEqual([...recipientsOf(i)].sort())
      expect(events).toHaveLength(1 + RECIPIENTS_EACH)
    })

    // The sink's record: each recipient once, with its own message.
    await pool(Array.from({ length: MESSAGES }, (_, i) => i), 16, async (i) => {
      for (const to of recipientsOf(i)) {
        const mails = await received(to)
        expect(mails, to).toHaveLength(1)
        expect(mails[0]!.headers["x-herald-message-id"]).toBe(ids[i])
      }
    })
    const final = await stats()
    expect(final).toMatchObject({ accepted: TOTAL, bounced: 0, rejected: 0, complaints: 0 })
    expect(final.duplicates).toBeGreaterThanOrEqual(0)
    console.log(JSON.stringify({
      mailer_crash: { recipients: TOTAL, posts_ms: sentMs, killed_after_ms: killedAfterMs, accepted_when_killed: afterKill.accepted, first_seen: atKill.accepted, deliveries_committed_when_killed: committed!.n, answered_503: answered.filter((id) => id === undefined).length, sink: final }
    }))
  }, 300_000)
})
