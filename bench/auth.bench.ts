// GET /api/v1/rcs/bots (10 bots) with an API key, 50 connections, next to two baselines answering
// the same JSON in the same run: a bare @effect/platform route (the framework's ceiling) and a bare
// node:http server (the machine's). Prints one JSON line.   npm run bench -- auth   (DURATION=10 seconds per run)
import autocannon from "autocannon"
import { cleanup, envFor, makeIsolation } from "../test/support/isolation.ts"
import { startHerald } from "../test/support/HeraldProcess.ts"
import { callJson } from "../test/support/http.ts"
import { httpBaselines } from "./support/baselines.ts"
import { accountWithTenBots } from "./support/botsAccount.ts"
import { round2 } from "./support/figures.ts"

const SECONDS = Number(process.env.DURATION ?? 10)
const CONNECTIONS = 50

const load = (url: string, token?: string) =>
  new Promise<{ rps: number; p50: number; p99: number; errors: number; non2xx: number }>((resolve, reject) => {
    autocannon(
      { url, connections: CONNECTIONS, duration: SECONDS, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (error, result) =>
        error ? reject(error) : resolve({ rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx })
    )
  })

const iso = makeIsolation()
const env = envFor(iso, { LOG_LEVEL: "warning", HERALD_API_KEY_RATE: "10000000", HERALD_API_KEY_BURST: "100000" })
const node = await startHerald(env)
try {
  const { key } = await accountWithTenBots(node.url, env, iso.databaseUrl)
  const answer = (await callJson(node.url, "GET", "/api/v1/rcs/bots", key)).body
  if (answer.bots?.length !== 10) throw new Error(`unexpected answer: ${JSON.stringify(answer).slice(0, 200)}`)
  const herald = await load(`${node.url}/api/v1/rcs/bots`, key)
  const { bare_effect_route: effect, bare_node_http: plain } = await httpBaselines(answer, (url) => load(url))

  console.log(JSON.stringify({
    bench: "auth",
    seconds: SECONDS,
    connections: CONNECTIONS,
    herald_bots_with_api_key: herald,
    baseline_bare_effect_route: effect,
    baseline_bare_node_http: plain,
    herald_vs_bare_effect: round2(herald.rps / effect.rps),
    herald_vs_node_http: round2(herald.rps / plain.rps),
    note: "herald: API key check (cached, revocation over the change feed), route allow-list and scope, a token from the key's ratelimit actor (limit raised so none is refused), the bots of the account (cached), request id, metrics; one process each; autocannon runs in the bench process on the same 2 cores"
  }))
} finally {
  await node.kill()
  await cleanup(iso)
}
process.exit(0)
