import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { useIsolation } from "../support/e2e.ts"
import { heraldEntry, type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { cliFor, ownerSession } from "../support/http.ts"

// The client commands in a real terminal: tmux (a private server on a socket of its own) runs each one
// in a window of its own, the test types into it and reads the screen back, escape codes included.
// It needs /usr/bin/tmux (Debian's `tmux`; .ci/run installs it) and fails without it.

const TMUX = "/usr/bin/tmux"
const iso = useIsolation()
let node: HeraldProcess
let key = ""
const scratch = mkdtempSync(join(tmpdir(), "herald-tty-"))
const home = join(scratch, "home")
// A private tmux server on a socket in the scratch directory (removed with it).
const socket = join(scratch, "tmux.sock")
const ROWS = 200_000
const ESC = "\u001b"

/** What the terminal's processes see: a home of their own and `herald` on the PATH. */
const terminalEnv = () => ({
  PATH: `${join(scratch, "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
  HOME: home,
  TERM: "xterm-256color",
  LANG: "C.UTF-8"
})

const tmux = (...args: Array<string>) => execFileSync(TMUX, ["-S", socket, ...args], { env: terminalEnv(), encoding: "utf8" })

/** The window's whole screen and history (`escapes`: with its colour codes). */
const screen = (window: string, escapes = false) => tmux("capture-pane", "-p", "-J", "-S", "-", ...(escapes ? ["-e"] : []), "-t", `main:${window}`)

/** The exit status of the window's command once it ended (it prints it last: see `open`). */
const exitStatus = (window: string) => {
  const found = /\[exit (\d+)\]/.exec(screen(window))
  return found ? Number(found[1]) : undefined
}

const until = async <A>(what: string, check: () => A | undefined, timeoutMs = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

let windows = 0
/** Runs `command` in a new window of the terminal, then prints its exit status; the window's name. */
const open = (command: string) => {
  const window = `w${++windows}`
  tmux("new-window", "-d", "-t", "main:", "-n", window, `${command}; echo "[exit $?]"`)
  return window
}

beforeAll(async () => {
  if (!existsSync(TMUX)) throw new Error(`${TMUX} is missing: this test needs tmux (apt-get install tmux)`)
  mkdirSync(home, { recursive: true })
  mkdirSync(join(scratch, "bin"))
  writeFileSync(join(scratch, "bin", "herald"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${heraldEntry.argv.map((a) => JSON.stringify(a)).join(" ")} "$@"\n`)
  chmodSync(join(scratch, "bin", "herald"), 0o755)
  const env = envFor(iso, { LOG_LEVEL: "warning" })
  node = await startHerald(env)
  await cliFor(env)("admin", "create-account", "--email", "tty@cli.io", "--password", "tty password", "--label", "Terminal Co", "--plan", "growth")
  key = (await ownerSession(node.url, "tty@cli.io", "tty password")).key
  expect(key).toMatch(/^sk_live_/)
  // 200,000 rows of CSV (about 8 MB): long enough to see the bar move.
  const lines = ["phone,name,city"]
  for (let i = 0; i < ROWS; i++) lines.push(`+9198${String(10_000_000 + i)},Customer ${i},City ${i % 50}`)
  writeFileSync(join(scratch, "big.csv"), lines.join("\n") + "\n")
  tmux("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "160", "-y", "50")
  // A window stays once its command ended, to be read.
  tmux("set-option", "-g", "remain-on-exit", "on")
}, 300_000)

afterAll(async () => {
  try {
    tmux("kill-server")
  } catch {
    // Not started.
  }
  await node?.kill()
  rmSync(scratch, { recursive: true, force: true })
})

describe("herald client commands in a terminal", () => {
  it("connect asks for the key at a hidden prompt; the typed key never shows", async () => {
    const window = open(`herald connect --url ${node.url}`)
    await until("the key prompt", () => (/Secret key/.test(screen(window)) ? true : undefined))
    tmux("send-keys", "-t", `main:${window}`, "-l", key)
    await new Promise((r) => setTimeout(r, 200))
    expect(screen(window)).not.toContain(key)
    tmux("send-keys", "-t", `main:${window}`, "Enter")
    expect(await until("connect to end", () => exitStatus(window))).toBe(0)
    const shown = screen(window)
    expect(shown).toContain('"label": "Terminal Co"')
    expect(shown).toContain('"plan": "growth"')
    expect(shown).not.toContain(key)
    expect(shown).not.toContain(key.slice(8, 20))
    const config = join(home, ".config", "herald", "config.json")
    expect(JSON.parse(readFileSync(config, "utf8"))).toEqual({ url: node.url, key })
    expect(statSync(config).mode & 0o777).toBe(0o600)
  })

  it("api prints coloured JSON on a terminal, plain with NO_COLOR", async () => {
    const [coloured, plain] = [open("herald api GET /app/me"), open("NO_COLOR=1 herald api GET /app/me")]
    expect(await until("api to end", () => exitStatus(coloured))).toBe(0)
    expect(await until("api to end", () => exitStatus(plain))).toBe(0)
    const withColour = screen(coloured, true)
    expect(withColour).toContain(ESC + "[")
    // The text under the colours is the pretty JSON.
    expect(screen(coloured)).toContain('"label": "Terminal Co"')
    expect(screen(plain, true)).not.toContain(ESC)
    expect(screen(plain)).toContain('  "account": {')
  })

  it("help and the pretty log are coloured on a terminal, plain with NO_COLOR", async () => {
    // A one-shot command on the node's database, logging in Effect's pretty format.
    const logged = `env DATABASE_URL=${iso.databaseUrl} LOG_FORMAT=pretty LOG_LEVEL=debug herald admin rotate-signing-key`
    const [help, plainHelp, log, plainLog] = [
      open("herald admin --help"),
      open("NO_COLOR=1 herald admin --help"),
      open(logged),
      open(`NO_COLOR=1 ${logged}`)
    ]
    for (const window of [help, plainHelp, log, plainLog]) expect(await until(`${window} to end`, () => exitStatus(window))).toBe(0)
    expect(screen(help, true)).toContain(ESC + "[")
    expect(screen(log, true)).toContain(ESC + "[")
    expect(screen(plainHelp, true)).not.toContain(ESC)
    expect(screen(plainLog, true)).not.toContain(ESC)
    // The same text under the colours.
    const text = (window: string) => screen(window).slice(0, screen(window).indexOf("[exit "))
    expect(text(plainHelp)).toBe(text(help))
    expect(screen(plainLog)).toContain("Migrations complete")
  })

  it("connect asks on stderr: with stdout in a file, the file holds only the JSON; NO_COLOR draws the prompt plain", async () => {
    const out = join(scratch, "connect.json")
    const window = open(`NO_COLOR=1 herald connect --url ${node.url} > ${out}`)
    await until("the key prompt", () => (/Secret key/.test(screen(window)) ? true : undefined))
    expect(screen(window, true)).not.toContain(ESC)
    tmux("send-keys", "-t", `main:${window}`, "-l", key)
    tmux("send-keys", "-t", `main:${window}`, "Enter")
    expect(await until("connect to end", () => exitStatus(window))).toBe(0)
    const written = readFileSync(out, "utf8")
    expect(written).not.toContain(ESC)
    expect(JSON.parse(written)).toMatchObject({ connected: true, url: node.url, account: { label: "Terminal Co" } })
    expect(screen(window)).not.toContain('"connected"')
  })

  it("contacts import shows a progress bar while the file streams, then the report", async () => {
    const window = open(`herald contacts import ${join(scratch, "big.csv")}`)
    const frames: Array<string> = []
    const status = await until("the import to end", () => {
      frames.push(screen(window))
      return exitStatus(window)
    }, 300_000)
    const last = screen(window)
    expect(status, last).toBe(0)
    const percents = frames.flatMap((f) => [...f.matchAll(/Importing .* (\d+)% \|/g)].map((m) => Number(m[1])))
    expect(percents.some((p) => p < 100), `frames: ${percents.join(",")}`).toBe(true)
    expect(last).toMatch(/Importing [█░]+ 100% \| [\d.]+\/[\d.]+ MB/)
    const report = JSON.parse(last.slice(last.indexOf("{"), last.lastIndexOf("}") + 1))
    expect(report).toMatchObject({ success: true, added: ROWS, updated: 0, duplicates: 0, invalid_count: 0 })
  }, 150_000)
})
