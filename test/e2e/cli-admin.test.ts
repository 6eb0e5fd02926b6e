import { beforeAll, describe, expect, it } from "@effect/vitest"
import { useDb, useIsolation } from "../support/e2e.ts"
import { heraldCommand } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"

// `herald admin` commands that act on an account take its id or its owner's e-mail address. They
// run as child processes on the file's own database (no node, no NATS), on pipes.

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso, { LOG_LEVEL: "warning" })
const ESC = "\u001b"
const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"

const admin = async (...args: Array<string>) => {
  const run = await heraldCommand(["admin", ...args], env)
  expect(run.stdout + run.stderr).not.toContain(ESC)
  return run
}
/** An admin command that must succeed: its JSON. */
const ok = async (...args: Array<string>) => {
  const run = await admin(...args)
  expect(run.code, `herald admin ${args.join(" ")}: ${run.stderr}`).toBe(0)
  return JSON.parse(run.stdout)
}
/** An admin command that must fail with exit 1: its `{success, code, message}`. */
const failure = async (...args: Array<string>) => {
  const run = await admin(...args)
  expect(run.code, `herald admin ${args.join(" ")}: ${run.stdout}`).toBe(1)
  expect(run.stdout).toBe("")
  return JSON.parse(run.stderr) as { success: boolean; code: string; message: string }
}

let acme = ""
let twice = ""
let twiceSecond = ""

beforeAll(async () => {
  // The first command creates and migrates the database; the rest can then run side by side.
  acme = (await ok("create-account", "--email", "owner@acme.io", "--password", "acme password", "--label", "Acme")).account_id
  twice = (await ok("create-account", "--email", "twice@cli.io", "--password", "twice password", "--label", "Twice")).account_id
  // A second account owned by the same person (nothing in the CLI makes one; the schema allows it).
  const [row] = await db<{ account_id: string }>(
    `INSERT INTO accounts (label, plan, owner_user_id) SELECT 'Twice Again', 'starter', owner_user_id FROM accounts WHERE account_id = $1 RETURNING account_id`,
    [twice]
  )
  twiceSecond = row!.account_id
}, 300_000)

describe("herald admin: an account named by its id or its owner's e-mail", () => {
  it("wallet-credit, set-plan, create-bot and create-wa-number take either, the address in any case", async () => {
    const [byId, byEmail, byUpperEmail] = await Promise.all([
      ok("wallet-credit", acme, "5"),
      ok("wallet-credit", "owner@acme.io", "10"),
      ok("wallet-credit", "  Owner@ACME.io ", "0.5")
    ])
    expect([byId.account_id, byEmail.account_id, byUpperEmail.account_id]).toEqual([acme, acme, acme])
    const [wallet] = await db<{ wallet_balance: string }>("SELECT wallet_balance FROM accounts WHERE account_id = $1", [acme])
    expect(Number(wallet!.wallet_balance)).toBe(15.5)

    const [plan, bot, number] = await Promise.all([
      ok("set-plan", "OWNER@acme.io", "enterprise", "--rate", "900"),
      ok("create-bot", "owner@acme.io", "--name", "Acme Bot"),
      ok("create-wa-number", acme.toUpperCase(), "--phone", "+919800000777")
    ])
    expect(plan).toMatchObject({ account_id: acme, plan: "enterprise", rate_per_minute: 900 })
    expect(bot).toMatchObject({ account_id: acme, name: "Acme Bot", status: "pending" })
    expect(number).toMatchObject({ account_id: acme, phone: "+919800000777", is_default: true })
  })

  it("an unknown id or address is account_not_found (exit 1), nothing changed", async () => {
    const [unknownEmail, unknownId, botForNobody] = await Promise.all([
      failure("wallet-credit", "nobody@acme.io", "5"),
      failure("set-plan", UNKNOWN_ID, "growth"),
      failure("create-bot", "nobody@acme.io", "--name", "Ghost")
    ])
    expect(unknownEmail).toEqual({ success: false, code: "account_not_found", message: "no account is owned by nobody@acme.io" })
    expect(unknownId).toEqual({ success: false, code: "account_not_found", message: `no account ${UNKNOWN_ID}` })
    expect(botForNobody.code).toBe("account_not_found")
    const [ghosts] = await db<{ count: string }>("SELECT count(*) FROM bots WHERE name = 'Ghost'")
    expect(Number(ghosts!.count)).toBe(0)
  })

  it("neither an id nor an address is invalid_request, naming what ACCOUNT takes", async () => {
    const bad = await failure("wallet-credit", "acme", "5")
    expect(bad.code).toBe("invalid_request")
    expect(bad.message).toBe(`ACCOUNT must be an account id (uuid) or its owner's e-mail address (got "acme")`)
  })

  it("an address owning two accounts is ambiguous_account, naming both ids; each id still works", async () => {
    const ambiguous = await failure("wallet-credit", "twice@cli.io", "5")
    expect(ambiguous.code).toBe("ambiguous_account")
    expect(ambiguous.message).toContain("2 accounts are owned by twice@cli.io")
    expect(ambiguous.message).toContain(twice)
    expect(ambiguous.message).toContain(twiceSecond)
    expect(ambiguous.message).toContain("name one by its id")
    const [first, second] = await Promise.all([ok("wallet-credit", twice, "1"), ok("set-plan", twiceSecond, "growth")])
    expect(first.account_id).toBe(twice)
    expect(second).toMatchObject({ account_id: twiceSecond, plan: "growth" })
  })

  it("a missing ACCOUNT is a usage error (exit 2); the help says what ACCOUNT takes", async () => {
    const [missing, help] = await Promise.all([admin("wallet-credit"), admin("set-plan", "--help")])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("Missing argument <ACCOUNT>")
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("the account: its id (a uuid) or its owner's e-mail address (any case)")
  })
})

describe("herald admin on a database already at this version", () => {
  // One query tells the command the schema is current: it runs neither the migrations nor the
  // sealing of secrets (the nodes do both at start, and `herald migrate`). So an operator's shell
  // without the nodes' HERALD_SECRETS_KEY can still credit a wallet (before, every admin command
  // first checked that key against the sealed secrets and refused); a command that seals a secret
  // still checks it.
  it("credits a wallet without the nodes' secrets key; rotate-signing-key, which seals, still refuses it", async () => {
    await ok("rotate-signing-key")
    const [keysBefore] = await db<{ count: string }>("SELECT count(*) FROM signing_keys")
    const otherShell = { ...env, HERALD_SECRETS_KEY: "not-the-nodes-secrets-key-0123456789abcdef" }
    const [credit, rotate] = await Promise.all([
      heraldCommand(["admin", "wallet-credit", twice, "2"], otherShell),
      heraldCommand(["admin", "rotate-signing-key"], otherShell)
    ])
    expect(credit.code, credit.stderr).toBe(0)
    expect(JSON.parse(credit.stdout)).toMatchObject({ account_id: twice, credited: 2 })
    expect(rotate.code, rotate.stdout).toBe(1)
    expect(JSON.parse(rotate.stderr)).toMatchObject({ success: false, code: "secrets_key_mismatch" })
    const [keysAfter] = await db<{ count: string }>("SELECT count(*) FROM signing_keys")
    expect(keysAfter!.count).toBe(keysBefore!.count)
  })
})
