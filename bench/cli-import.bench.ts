// `herald contacts import` of a 1,000,000-row CSV file into a real node (POST
// /api/v1/app/contacts/import, customers upserted by phone), next to its floor in the same run: the
// same file streamed to the same endpoint by a bare node script (undici, a file stream, nothing
// else). Two runs of each in ABBA order, each into an emptied customers table (so every run inserts
// every row); the best of each counts. Wall time of each process (start-up included), rows/s, and
// the CLI process's peak RSS (/usr/bin/time -v when present, else VmHWM polled from /proc). Prints
// one JSON line.
//   npm run bench -- cli-import   (ROWS=1000000)
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import Pg from "pg"
import { heraldCommand, heraldEntry, startHerald } from "../test/support/HeraldProcess.ts"
import { ownerSession } from "../test/support/http.ts"
import { cleanup, envFor, makeIsolation } from "../test/support/isolation.ts"
import { round2 } from "./support/figures.ts"

const ROWS = Number(process.env.ROWS ?? 1_000_000)
const TIME = "/usr/bin/time"
/** The checkout: the floor's script resolves undici from here. */
const ROOT = fileURLToPath(new URL("..", import.meta.url))

/** Row i: a distinct valid Indian mobile number, a name and one trait column (~40 bytes). */
const writeCsv = async (path: string) => {
  const out = createWriteStream(path)
  out.write("phone,name,city\n")
  let chunk = ""
  for (let i = 0; i < ROWS; i++) {
    chunk += `+91${9_000_000_000 + i},Customer ${i},City ${i % 100}\n`
    if (chunk.length >= 64 * 1024) {
      if (!out.write(chunk)) await once(out, "drain")
      chunk = ""
    }
  }
  out.end(chunk)
  await once(out, "finish")
}

/** The floor: the file streamed by undici with nothing around it, as its own node process. */
const FLOOR = `
import { createReadStream, statSync } from "node:fs"
import { request } from "undici"
const [file, url, key] = process.argv.slice(1)
const res = await request(url, {
  method: "POST",
  headers: { authorization: "Bearer " + key, "content-type": "text/csv", "content-length": String(statSync(file).size) },
  body: createReadStream(file, { highWaterMark: 256 * 1024 }),
  headersTimeout: 0
})
process.stdout.write(await res.body.text())
process.exitCode = res.statusCode === 200 ? 0 : 1
`

interface Timed {
  readonly seconds: number
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly peakRssMb: number
}

/** Runs a process to its end: wall time, output and peak RSS. */
const timed = async (argv: ReadonlyArray<string>, env: Record<string, string>): Promise<Timed> => {
  const useTime = existsSync(TIME)
  const started = performance.now()
  const child = spawn(useTime ? TIME : argv[0]!, useTime ? ["-v", ...argv] : argv.slice(1), {
    env: { PATH: process.env.PATH ?? "", ...env },
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  // Without /usr/bin/time: VmHWM (the high-water mark) read until the process is gone.
  let polledKb = 0
  const poll = useTime ? undefined : setInterval(() => {
    try {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))
      if (hwm) polledKb = Math.max(polledKb, Number(hwm[1]))
    } catch {
      // Exited.
    }
  }, 50)
  const [code] = (await once(child, "close")) as [number | null]
  const seconds = (performance.now() - started) / 1000
  if (poll) clearInterval(poll)
  const timeKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? 0)
  return { seconds, code, stdout, stderr, peakRssMb: Math.round((useTime ? timeKb : polledKb) / 1024) }
}

const iso = makeIsolation()
const env = envFor(iso, { LOG_LEVEL: "warning" })
const scratch = mkdtempSync(join(tmpdir(), "herald-cli-bench-"))
const node = await startHerald(env)
try {
  const csv = join(scratch, "contacts.csv")
  await writeCsv(csv)
  const bodyMb = statSync(csv).size / 1024 / 1024

  const keys: Array<string> = []
  for (const name of ["cli", "floor"]) {
    const made = await heraldCommand(["admin", "create-account", "--email", `${name}@bench.io`, "--password", "bench password", "--label", name, "--plan", "growth"], env)
    if (made.code !== 0) throw new Error(made.stderr)
    keys.push((await ownerSession(node.url, `${name}@bench.io`, "bench password")).key)
  }
  const home = join(scratch, "home")
  mkdirSync(join(home, ".config", "herald"), { recursive: true, mode: 0o700 })
  writeFileSync(join(home, ".config", "herald", "config.json"), JSON.stringify({ url: node.url, key: keys[0] }), { mode: 0o600 })

  const check = (what: string, run: Timed) => {
    const report = run.code === 0 ? JSON.parse(run.stdout.slice(run.stdout.indexOf("{"))) : undefined
    if (report?.added !== ROWS) throw new Error(`${what} failed (${run.code}): ${run.stdout.slice(0, 300)} ${run.stderr.slice(-500)}`)
    return run
  }
  const db = new Pg.Client({ connectionString: iso.databaseUrl })
  await db.connect()
  // Every run starts from an empty customers table, so each inserts every row into the same table.
  const emptied = async () => {
    await db.query("TRUNCATE customers CASCADE")
    await db.query("VACUUM ANALYZE customers")
  }
  const runCli = async () => {
    await emptied()
    return check("herald contacts import", await timed([process.execPath, ...heraldEntry.argv, "contacts", "import", csv], { HOME: home }))
  }
  const runFloor = async () => {
    await emptied()
    return check("the floor", await timed([process.execPath, "--input-type=module", "-e", FLOOR, csv, `${node.url}/api/v1/app/contacts/import`, keys[1]!], {}))
  }
  // ABBA: drift (a busy machine, a warming database) weighs on both alike; the best of each counts.
  const runs = { cli: [] as Array<Timed>, floor: [] as Array<Timed> }
  runs.cli.push(await runCli())
  runs.floor.push(await runFloor())
  runs.floor.push(await runFloor())
  runs.cli.push(await runCli())
  await db.end()
  // What the CLI holds before it does anything: `herald disconnect` with nothing stored loads the
  // same (client) bundle and exits.
  const idle = await timed([process.execPath, ...heraldEntry.argv, "disconnect"], { HERALD_CONFIG: join(tmpdir(), `herald-bench-idle-${process.pid}.json`) })
  const best = (list: Array<Timed>) => Math.min(...list.map((r) => r.seconds))
  const cli = { seconds: best(runs.cli), peakRssMb: Math.max(...runs.cli.map((r) => r.peakRssMb)) }
  const floor = { seconds: best(runs.floor), peakRssMb: Math.max(...runs.floor.map((r) => r.peakRssMb)) }

  console.log(JSON.stringify({
    bench: "cli-import",
    rows: ROWS,
    body_mb: round2(bodyMb),
    seconds: round2(cli.seconds),
    rows_per_s: Math.round(ROWS / cli.seconds),
    floor_seconds: round2(floor.seconds),
    ratio: round2(cli.seconds / floor.seconds),
    cli_peak_rss_mb: cli.peakRssMb,
    cli_idle_peak_rss_mb: idle.peakRssMb,
    floor_peak_rss_mb: floor.peakRssMb,
    runs_seconds: { cli: runs.cli.map((r) => round2(r.seconds)), floor: runs.floor.map((r) => round2(r.seconds)) },
    note: "one herald node (role all), Postgres and both clients on the same machine; each process timed from spawn to exit (the CLI's start-up included); cli_idle_peak_rss_mb: `herald disconnect` with nothing stored, the same client bundle loaded and nothing done; two runs each (ABBA), the best counts, each into an emptied customers table; floor: the same file streamed by undici from a bare node script"
  }))
} finally {
  await node.kill()
  await cleanup(iso)
  rmSync(scratch, { recursive: true, force: true })
}
process.exit(0)
