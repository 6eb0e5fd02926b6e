// The two send rows of bench/hotpath: an account set up as bench/send and bench/public-send set
// theirs up (money, an active bot with no throughput limit, a WhatsApp number with no throughput
// limit, an Enterprise plan rate out of the way, the secret key), the recipients each request
// takes, and the wait for the WhatsApp sends accepted by a run to leave before the next run starts.
import Pg from "pg"
import { heraldCommand } from "../../test/support/HeraldProcess.ts"
import { callJson } from "../../test/support/http.ts"

/** WhatsApp customers with an open window; the sends cycle through them. */
export const WA_CUSTOMERS = 500

const cli = async (args: Array<string>, env: Record<string, string>) => {
  const r = await heraldCommand(args, env)
  if (r.code !== 0) throw new Error(`herald ${args.join(" ")} exited with ${r.code}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

/**
 * The i-th recipient, digits with the country code: valid Indian mobile numbers whose last four
 * digits run 1000–9999, never the simulator's 0001–0006 (which refuse, hold or fail a send), so
 * every send is answered and accepted; 90,000 of them before one comes back.
 */
export const recipientDigits = (i: number) => {
  const n = i % 90_000
  return `9198765${Math.floor(n / 9_000)}${1_000 + (n % 9_000)}`
}

export const prepareSends = async (opts: { readonly url: string; readonly simUrl: string; readonly env: Record<string, string>; readonly databaseUrl: string }) => {
  const { env, url } = opts
  const email = "sends@example.com"
  const password = "bench password"
  const account = (await cli(["admin", "create-account", "--email", email, "--password", password, "--label", "Sends", "--plan", "enterprise"], env)).account_id as string
  // The public API shares the plan bucket: raised out of the way, the row measures sends, not 429s.
  await cli(["admin", "set-plan", account, "enterprise", "--rate", "100000000"], env)
  // RCS costs HERALD_MESSAGE_PRICE (0.1) a send: enough for every run, no 402.
  await cli(["admin", "wallet-credit", account, "100000000"], env)
  const bot = (await cli(["admin", "create-bot", account, "--name", "Sends", "--status", "active"], env)).bot_id as string
  await cli(["admin", "bot-throughput", bot, "unlimited"], env)
  const number = await cli(["admin", "create-wa-number", account, "--phone", "+919800000001", "--throughput", "1000000"], env)
  const phoneNumberId = number.phone_number_id as string
  const token = (await callJson(url, "POST", "/api/v1/rcs/auth/login", undefined, { email, password })).body.token as string
  const key = (await callJson(url, "POST", "/api/v1/app/developer/secret-key", token)).body.secret_key as string
  if (typeof token !== "string" || typeof key !== "string") throw new Error("sends: no session token or secret key")

  // Each customer writes first (the simulator posts Meta's webhook to Herald): their 24-hour
  // windows are open for free-form messages, as bench/public-send opens its customer's.
  for (let i = 0; i < WA_CUSTOMERS; i += 20) {
    await Promise.all(Array.from({ length: Math.min(20, WA_CUSTOMERS - i) }, async (_, j) => {
      const res = await fetch(`${opts.simUrl}/simulate/wa/inbound`, {
        method: "POST",
        body: JSON.stringify({ phone_number_id: phoneNumberId, from: recipientDigits(i + j), text: "hi" })
      })
      if (!res.ok) throw new Error(`simulate/wa/inbound: ${res.status} ${await res.text()}`)
    }))
  }
  const db = new Pg.Client({ connectionString: opts.databaseUrl })
  await db.connect()
  for (const deadline = Date.now() + 60_000;;) {
    const open = Number((await db.query<{ n: string }>(
      "SELECT count(*) AS n FROM conversations WHERE phone_number_id = $1 AND last_inbound_at IS NOT NULL",
      [phoneNumberId]
    )).rows[0]!.n)
    if (open >= WA_CUSTOMERS) break
    if (Date.now() > deadline) throw new Error(`sends: ${open} of ${WA_CUSTOMERS} WhatsApp windows open after 60 s`)
    await new Promise((r) => setTimeout(r, 200))
  }

  let rcsNext = 0
  let waNext = 0
  const rcsBody = () => JSON.stringify({ bot_id: bot, to: `+${recipientDigits(rcsNext++)}`, text: "Your order has shipped." })
  const waBody = () =>
    JSON.stringify({ fullPhoneNumber: recipientDigits(waNext++ % WA_CUSTOMERS), type: "Text", data: { message: "Your order has shipped." } })

  /**
   * Until every WhatsApp send accepted so far (`accepted`: the 202s counted) is recorded and has
   * left (Meta's `sent` came back), so a run's backlog never runs into the next variant's run.
   * Autocannon misses the answers still in flight when a run ends: the count must also stand still.
   * Returns the seconds it took.
   */
  const drainWhatsApp = async (accepted: number) => {
    const started = Date.now()
    let last = -1
    for (const deadline = started + 120_000;;) {
      const { pending, total } = (await db.query<{ pending: string; total: string }>(
        "SELECT count(*) FILTER (WHERE status IN ('queued', 'accepted', 'unconfirmed')) AS pending, count(*) AS total FROM wa_messages"
      )).rows[0]!
      const [p, t] = [Number(pending), Number(total)]
      if (p === 0 && t >= accepted && t === last) return (Date.now() - started) / 1000
      if (Date.now() > deadline) throw new Error(`public_send: ${p} of ${t} WhatsApp sends still pending (${accepted} accepted) after 120 s`)
      last = t
      await new Promise((r) => setTimeout(r, 250))
    }
  }

  const statuses = async () => {
    const rows = async (table: string) =>
      Object.fromEntries((await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM ${table} GROUP BY status ORDER BY status`)).rows.map((r) => [r.status, r.n]))
    return { messages: await rows("messages"), wa_messages: await rows("wa_messages") }
  }

  return { token, key, rcsBody, waBody, drainWhatsApp, statuses, close: () => db.end() }
}
