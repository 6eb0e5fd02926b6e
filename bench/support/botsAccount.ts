import Pg from "pg"
import { heraldCommand } from "../../test/support/HeraldProcess.ts"
import { callJson } from "../../test/support/http.ts"

/**
 * A Growth account with ten active bots, its owner's token and an API key that may list bots: what
 * the bots-with-an-API-key rows of bench/auth and bench/hotpath measure, set up the same way so
 * their figures compare.
 */
export const accountWithTenBots = async (nodeUrl: string, env: Record<string, string>, databaseUrl: string) => {
  const created = JSON.parse((await heraldCommand(["admin", "create-account", "--email", "bench@example.com", "--password", "bench password", "--label", "Bench", "--plan", "growth"], env)).stdout)
  const db = new Pg.Client({ connectionString: databaseUrl })
  await db.connect()
  await db.query("INSERT INTO bots (account_id, name, status, use_case) SELECT $1, 'bot ' || i, 'active', 'promotional' FROM generate_series(1, 10) AS i", [created.account_id])
  await db.end()
  const token = (await callJson(nodeUrl, "POST", "/api/v1/rcs/auth/login", undefined, { email: "bench@example.com", password: "bench password" })).body.token as string
  const key = (await callJson(nodeUrl, "POST", "/api/v1/rcs/api-keys", token, { name: "bench", scopes: ["contacts:read"] })).body.raw_key as string
  return { accountId: created.account_id as string, token, key }
}
