import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { useIsolation } from "../support/e2e.ts"
import { heraldCommand, type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"

// A customer import's CSV cells are typed (docs/customers.md, Importing): numbers, booleans and
// ISO dates imported through POST /api/v1/app/contacts/import and `herald contacts import` are
// found by the public search's numeric, boolean and date filters, a `:text` column stays text,
// a re-import keeps a tracked number a number, and NDJSON traits keep the types they were sent with.

const iso = useIsolation()
let node: HeraldProcess
let key = ""
const scratch = mkdtempSync(join(tmpdir(), "herald-typed-import-"))

type Json = Record<string, any>

const importBody = async (body: string, contentType: string) => {
  const r = await fetch(`${node.url}/api/v1/app/contacts/import`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": contentType }, body })
  return { status: r.status, body: (await r.json()) as Json }
}
const pub = (method: string, path: string, body?: unknown) => callJson(node.url, method, `/api/v1/public${path}`, `Basic ${key}`, body)
/** The names of the customers matching `filters`, sorted (names are the one field every customer shape shares). */
const found = async (...filters: Array<Json>): Promise<Array<string>> => {
  const r = await pub("POST", "/customers/search", { filters, limit: 1000 })
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return (r.body.customers as Array<Json>).map((c) => c.name as string).sort()
}
const traitsOf = async (name: string): Promise<Json> => {
  const r = await callJson(node.url, "GET", `/api/v1/app/contacts?search=${encodeURIComponent(name)}`, `Bearer ${key}`)
  expect(r.body.contacts, JSON.stringify(r.body)).toHaveLength(1)
  return r.body.contacts[0].traits
}

beforeAll(async () => {
  const env = envFor(iso, { LOG_LEVEL: "warning" })
  node = await startHerald(env)
  await cliFor(env)("admin", "create-account", "--email", "owner@typed.io", "--password", "owner password", "--label", "Typed", "--plan", "growth")
  key = (await ownerSession(node.url, "owner@typed.io", "owner password")).key
})
afterAll(async () => {
  await node?.kill()
  rmSync(scratch, { recursive: true, force: true })
})

describe("a CSV import's typed traits", () => {
  it("are found by numeric, boolean and date filters; a :text column and NDJSON strings stay text", async () => {
    // Tracked with a number first: the CSV's re-import must keep it a number.
    expect((await pub("POST", "/track/users", { fullPhoneNumber: "+919876570003", name: "Meera", traits: { orders: 3 } })).status).toBe(200)
    const csv = [
      "phone,name,city,orders,vip,signup,zip,ref:text",
      "+919876570001,Asha,Pune,5,true,2025-03-14,00123,42",
      "+919876570002,Ravi,Pune,2,FALSE,2024-12-31T23:00:00Z,560001,7",
      "+919876570003,Meera,Delhi,12,false,2025-06-01T10:00:00+05:30,,0042",
      ""
    ].join("\r\n")
    const r = await importBody(csv, "text/csv")
    expect(r).toMatchObject({ status: 200, body: { added: 2, updated: 1, invalid_count: 0 } })

    expect(await found({ trait: "orders", op: "gte", value: 5 })).toEqual(["Asha", "Meera"])
    expect(await found({ trait: "orders", op: "lt", value: 5 })).toEqual(["Ravi"])
    expect(await found({ trait: "vip", op: "eq", value: true })).toEqual(["Asha"])
    expect(await found({ trait: "vip", op: "eq", value: false })).toEqual(["Meera", "Ravi"])
    expect(await found({ trait: "signup", op: "gte", value: "2025-01-01" })).toEqual(["Asha", "Meera"])
    expect(await found({ trait: "signup", op: "lt", value: "2025-01-01" })).toEqual(["Ravi"])
    expect(await found({ trait: "zip", op: "eq", value: 560001 })).toEqual(["Ravi"])
    // The :text column is a string trait named without the suffix, leading zeros kept.
    expect(await found({ trait: "ref", op: "eq", value: "42" })).toEqual(["Asha"])
    expect(await found({ trait: "ref", op: "gte", value: 0 })).toEqual([])
    expect(await traitsOf("Asha")).toEqual({ city: "Pune", orders: 5, vip: true, signup: "2025-03-14", zip: "00123", ref: "42" })
    expect(await traitsOf("Meera")).toEqual({ city: "Delhi", orders: 12, vip: false, signup: "2025-06-01T10:00:00+05:30", ref: "0042" })

    // NDJSON traits are stored as sent: a string of digits is no number.
    const ndjson = JSON.stringify({ phone: "+919876570004", name: "Nila", traits: { orders: "50", vip: "true", visits: 7 } }) + "\n"
    expect(await importBody(ndjson, "application/x-ndjson")).toMatchObject({ status: 200, body: { added: 1, invalid_count: 0 } })
    expect(await found({ trait: "orders", op: "gte", value: 5 })).toEqual(["Asha", "Meera"])
    expect(await found({ trait: "orders", op: "eq", value: "50" })).toEqual(["Nila"])
    expect(await found({ trait: "visits", op: "gt", value: 6 })).toEqual(["Nila"])
    expect(await traitsOf("Nila")).toEqual({ orders: "50", vip: "true", visits: 7 })
  })

  it("are typed the same when `herald contacts import` streams the file", async () => {
    const config = join(scratch, "config.json")
    writeFileSync(config, JSON.stringify({ url: node.url, key }), { mode: 0o600 })
    const file = join(scratch, "cli.csv")
    writeFileSync(file, [
      "phone,name,points,active,renewal,code:text",
      "+919876571001,Cli One,150,true,2026-01-15,007",
      "+919876571002,Cli Two,99.5,false,2025-11-30T18:00:00Z,8",
      ""
    ].join("\n"))
    const run = await heraldCommand(["contacts", "import", file], { HERALD_CONFIG: config })
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ added: 2, invalid_count: 0 })

    expect(await found({ trait: "points", op: "gte", value: 100 })).toEqual(["Cli One"])
    expect(await found({ trait: "points", op: "lt", value: 100 })).toEqual(["Cli Two"])
    expect(await found({ trait: "active", op: "eq", value: false })).toEqual(["Cli Two"])
    expect(await found({ trait: "renewal", op: "gt", value: "2025-12-01" })).toEqual(["Cli One"])
    expect(await found({ trait: "code", op: "in", value: ["007", "8"] })).toEqual(["Cli One", "Cli Two"])
    expect(await traitsOf("Cli One")).toEqual({ points: 150, active: true, renewal: "2026-01-15", code: "007" })
  })
})
