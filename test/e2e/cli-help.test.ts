import { beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { heraldEntry } from "../support/HeraldProcess.ts"

// Every `herald` command's --help, read as a person reads it: found from the listing of
// `herald --help` (so a new command is checked without being named here), run on a pipe as
// scripts and pagers run it. No database or NATS: help and usage errors come before any command.

const ESC = "\u001b"
const REQUIRED = "This setting is required."
const OPTIONAL = /^This setting is optional\./
const FROM_ENV = "This option can be set from environment variables."
/** @effect/cli's own options, on every command, not in its usage line. */
const BUILT_IN = new Set(["--completions", "--log-level", "--help", "--wizard", "--version"])

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const herald = async (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Run> => {
  const child = spawn(process.execPath, [...heraldEntry.argv, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d))
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
  const [code] = (await once(child, "close")) as [number | null]
  return { code, stdout, stderr }
}

/** Runs `f` over `items`, `limit` at a time. */
const mapLimited = async <A, B>(items: ReadonlyArray<A>, limit: number, f: (a: A) => Promise<B>): Promise<Array<B>> => {
  const out: Array<B> = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await f(items[i]!)
    }
  }))
  return out
}

/** The command paths of `herald --help`'s listing: `admin set-plan [--rate integer] …  Change …` → `admin set-plan`. */
const listedCommands = (help: string) =>
  help.split("\n").filter((l) => l.startsWith("  - ")).map((line) => {
    const usage = line.slice(4).split(/\s{2,}/)[0]!
    const path: Array<string> = []
    for (const word of usage.split(" ")) {
      if (!/^[a-z][a-z-]*$/.test(word)) break
      path.push(word)
    }
    return path.join(" ")
  })

/** Repeated adjacent words (across line breaks too) and a line said twice in a row. */
const repetitions = (text: string) => {
  const found = [...text.matchAll(/\b(\w+)\s+\1\b/gi)].map((m) => JSON.stringify(m[0]))
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "")
  lines.forEach((line, i) => {
    if (i > 0 && lines[i - 1] === line) found.push(`line twice: ${JSON.stringify(line)}`)
  })
  return found
}

interface Entry {
  readonly heading: string
  readonly body: ReadonlyArray<string>
}

/** The entries of a help page's ARGUMENTS and OPTIONS sections: a heading, then its indented lines. */
const entries = (help: string) => {
  const result: Array<Entry> = []
  let section = ""
  for (const line of help.split("\n")) {
    if (/^[A-Z]+$/.test(line)) {
      section = line
      continue
    }
    if (section !== "ARGUMENTS" && section !== "OPTIONS") continue
    if (line !== "" && !line.startsWith(" ")) result.push({ heading: line, body: [] })
    else if (line.trim() !== "") (result.at(-1)!.body as Array<string>).push(line.trim())
  }
  return result
}

/** The names in an entry's heading: `--rate integer` → [--rate]; `(-h, --help)` → [-h, --help]; `<ACCOUNT>` → [<ACCOUNT>]. */
const names = (heading: string) => [...heading.matchAll(/--?[a-z][a-z-]*|<[^>]+>/g)].map((m) => m[0])

let commands: ReadonlyArray<string> = []
let helps: ReadonlyArray<{ readonly command: string; readonly run: Run }> = []

beforeAll(async () => {
  const top = await herald(["--help"])
  commands = listedCommands(top.stdout)
  helps = await mapLimited(["", ...commands], 3, async (command) => ({
    command,
    run: await herald([...command.split(" ").filter((w) => w !== ""), "--help"])
  }))
  // Every command's help, three processes at a time: past two minutes beside the heaviest files.
}, 300_000)

describe("herald --help", () => {
  it("lists every command once, under its own path; each one's help answers", () => {
    expect(commands).toEqual(expect.arrayContaining([
      "serve",
      "admin",
      "admin set-plan",
      "admin poison",
      "admin poison list",
      "admin poison redrive",
      "webhooks attempts",
      "connect",
      "api",
      "contacts import"
    ]))
    expect(new Set(commands).size).toBe(commands.length)
    for (const { command, run } of helps) expect(run.code, `herald ${command} --help: ${run.stderr}`).toBe(0)
  })

  it("has no escape codes on a pipe, whatever FORCE_COLOR says", async () => {
    for (const { command, run } of helps) expect(run.stdout.includes(ESC), `herald ${command} --help`).toBe(false)
    const forced = await herald(["admin", "--help"], { FORCE_COLOR: "1", CI: "true" })
    expect(forced.stdout).toBe(helps.find((h) => h.command === "admin")!.run.stdout)
  })

  it("repeats no word and no line, and says each command's description once", () => {
    expect(helps.length).toBeGreaterThan(30)
    for (const { command, run } of helps) {
      expect(repetitions(run.stdout), `herald ${command} --help`).toEqual([])
      // The program's name and version head the page once.
      expect(run.stdout.split("\n")[0]).toMatch(/^herald \d+\.\d+\.\d+/)
      expect(run.stdout.match(/^herald\b/gm)).toHaveLength(1)
    }
  })

  it("marks every argument and option required or optional, as the parser enforces it, with its default", () => {
    for (const { command, run } of helps) {
      const usage = run.stdout.split("\n").find((l) => l.startsWith("$ ")) ?? ""
      for (const entry of entries(run.stdout)) {
        const where = `herald ${command} --help: ${entry.heading}`
        const required = entry.body.filter((l) => l === REQUIRED).length
        const optional = entry.body.filter((l) => OPTIONAL.test(l)).length
        const fromEnv = entry.body.filter((l) => l === FROM_ENV).length
        expect(required + optional + fromEnv, where).toBe(1)
        const [name] = names(entry.heading).filter((n) => n.startsWith("<") || !BUILT_IN.has(n) && n !== "-h")
        if (name === undefined) continue
        // The usage line, which @effect/cli derives from the parser, brackets what may be left out.
        const bracketed = new RegExp(`\\[${name.replace(/[|[\]]/g, "\\$&")}[ \\]]`).test(usage)
        expect(bracketed, `${where} (usage: ${usage})`).toBe(required === 0)
        // An environment fallback names its variable.
        if (fromEnv === 1) expect(entry.body.join(" "), where).toMatch(/\b[A-Z][A-Z_]+\b/)
      }
    }
    const createAccount = helps.find((h) => h.command === "admin create-account")!.run.stdout
    expect(createAccount).toMatch(/--plan .*\n(\n.*)*?\n  Default: starter\.\n\n  This setting is optional\./)
    expect(createAccount).toMatch(/--email text\n(\n.*)*?\n  This setting is required\./)
  })

  it("says where --url points by default, PORT included", () => {
    for (const command of ["connect", "webhooks attempts"]) {
      expect(helps.find((h) => h.command === command)!.run.stdout).toContain(
        "http://127.0.0.1:$PORT when PORT is set, else http://127.0.0.1:8080"
      )
    }
  })

  it("usage errors exit 2, plain on a pipe", async () => {
    const runs = await mapLimited(
      [["admin", "set-plan"], ["admin", "create-account", "--email", "a@b.io"], ["api"], ["admin", "no-such-command"], ["connect", "--no-such-option"]],
      5,
      (args) => herald(args, { NO_COLOR: "" })
    )
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(2)
      expect(run.stderr).not.toContain(ESC)
      expect(repetitions(run.stderr)).toEqual([])
    }
    expect(runs[0]!.stderr).toContain("Missing argument <ACCOUNT>")
  })
})
