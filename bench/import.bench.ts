// A 1,000,000-row CSV streamed into one contact list through POST
// /api/v1/rcs/contact-lists/{id}/contacts (parsed, every phone normalised to E.164, written in
// batches in one transaction), next to the floors in the same run: the same rows written straight
// into a scratch table shaped like `contacts` (unnest INSERT, 5,000 a statement, one
// transaction), and libphonenumber's normalisation of the same numbers alone. Wall time, rows/s,
// server peak RSS. Prints one JSON line.   npm run bench -- import   (ROWS=1000000, PROFILE=<dir>)
import { readFileSync, writeFileSync } from "node:fs"
import http from "node:http"
import { Readable } from "node:stream"
import Pg from "pg"
import { toE164 } from "../src/messaging/phone.ts"
import { heraldCommand, heraldEntry, startHerald } from "../test/support/HeraldProcess.ts"
import { callJson } from "../test/support/http.ts"
import { cleanup, envFor, makeIsolation } from "../test/support/isolation.ts"
import { round2 } from "./support/figures.ts"

const ROWS = Number(process.env.ROWS ?? 1_000_000)
const BATCH = 5_000

/** Row i: a distinct valid Indian mobile number, a name and one params column (~50 bytes of CSV). */
const phoneOf = (i: number) => `+91${9_000_000_000 + i}`
const nameOf = (i: number) => `Customer ${i}`
const cityOf = (i: number) => `City ${i % 100}`

let bodyBytes = 0
function* csv() {
  yield "phone,name,city\n"
  let chunk = ""
  for (let i = 0; i < ROWS; i++) {
    chunk += `${phoneOf(i)},${nameOf(i)},${cityOf(i)}\n`
    if (chunk.length >= 64 * 1024) {
      bodyBytes += chunk.length
      yield chunk
      chunk = ""
    }
  }
  bodyBytes += chunk.length
  yield chunk
}

const memoryMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const field = (name: string) => Math.round(Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024)
  return { rss: field("VmRSS"), peak: field("VmHWM") }
}

const upload = (url: string, token: string, body: Readable) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const request = http.request(url, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "text/csv" } }, (response) => {
      let text = ""
      response.setEncoding("utf8").on("data", (d) => (text += d)).on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }))
    })
    request.on("error", reject)
    body.pipe(request)
  })

const iso = makeIsolation()
// PROFILE=<dir>: the server writes a CPU profile there when it stops.
const PROFILE = process.env.PROFILE
const env = envFor(iso, { LOG_LEVEL: "warning" })
const node = await startHerald(env, PROFILE ? { entry: { argv: ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, ...heraldEntry.argv, "serve"] } } : {})
try {
  const cli = async (...args: Array<string>) => JSON.parse((await heraldCommand(args, env)).stdout)
  await cli("admin", "create-account", "--email", "bench@import.io", "--password", "bench password", "--label", "Bench")
  const token = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "bench@import.io", password: "bench password" })).body.token
  const listId = (await callJson(node.url, "POST", "/api/v1/rcs/contact-lists", token, { name: "bench" })).body.list.list_id

  // Through Herald.
  const pid = node.child.pid!
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
  } catch {
    // The peak then counts from the start of the process.
  }
  const before = memoryMb(pid)
  let sampledPeak = before.rss
  const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, memoryMb(pid).rss)), 200)
  const started = performance.now()
  const answer = await upload(`${node.url}/api/v1/rcs/contact-lists/${listId}/contacts`, token, Readable.from(csv()))
  const herald = (performance.now() - started) / 1000
  clearInterval(sampler)
  const after = memoryMb(pid)
  if (answer.status !== 200 || answer.body.added !== ROWS) throw new Error(`import failed: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`)

  // The database floor: the same rows, already normalised, into a table shaped like contacts.
  const db = new Pg.Client({ connectionString: iso.databaseUrl })
  await db.connect()
  await db.query(`CREATE TABLE scratch_contacts (list_id uuid NOT NULL, contact_id bigint GENERATED ALWAYS AS IDENTITY, phone text NOT NULL,
    name text, params jsonb NOT NULL DEFAULT '{}', created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (list_id, contact_id), UNIQUE (list_id, phone))`)
  const floorStarted = performance.now()
  await db.query("BEGIN")
  for (let start = 0; start < ROWS; start += BATCH) {
    const phones: Array<string> = [], names: Array<string> = [], params: Array<string> = []
    for (let i = start; i < Math.min(start + BATCH, ROWS); i++) {
      phones.push(phoneOf(i))
      names.push(nameOf(i))
      params.push(JSON.stringify({ city: cityOf(i) }))
    }
    await db.query(
      `INSERT INTO scratch_contacts (list_id, phone, name, params)
       SELECT $1, t.phone, t.name, t.params FROM unnest($2::text[], $3::text[], $4::jsonb[]) WITH ORDINALITY AS t(phone, name, params, ord)
       ORDER BY t.ord ON CONFLICT (list_id, phone) DO NOTHING`,
      [listId, phones, names, params]
    )
  }
  await db.query("COMMIT")
  const floor = (performance.now() - floorStarted) / 1000
  const [stored] = (await db.query<{ n: number; count: number }>("SELECT count(*)::int AS n, (SELECT contact_count FROM contact_lists WHERE list_id = $1) AS count FROM contacts WHERE list_id = $1", [listId])).rows
  await db.end()

  // The CPU floor of normalisation: libphonenumber on the same numbers, in this process.
  const normaliseStarted = performance.now()
  for (let i = 0; i < ROWS; i++) toE164(phoneOf(i))
  const normalise = (performance.now() - normaliseStarted) / 1000

  console.log(JSON.stringify({
    bench: "import",
    rows: ROWS,
    body_mb: round2(bodyBytes / 1024 / 1024),
    herald: { seconds: round2(herald), rows_per_s: Math.round(ROWS / herald), rss_before_mb: before.rss, peak_rss_mb: Math.max(after.peak, sampledPeak), peak_growth_mb: Math.max(after.peak, sampledPeak) - before.rss },
    floor_unnest_insert: { seconds: round2(floor), rows_per_s: Math.round(ROWS / floor) },
    floor_normalise_only: { seconds: round2(normalise), rows_per_s: Math.round(ROWS / normalise) },
    herald_vs_insert_floor: round2(herald / floor),
    stored: stored,
    note: "one herald process (role all) with Postgres and this client on the same 2 cores; the CSV is generated as it is sent (chunked); the import is one transaction, 5,000 rows an INSERT; floors: same rows pre-normalised by unnest INSERT into a scratch table with the same indexes, and toE164 alone"
  }))
} finally {
  await (PROFILE ? node.stop() : node.kill())
  await cleanup(iso)
}
process.exit(0)
