import { heraldCommand } from "./HeraldProcess.ts"

/** A JSON call to a node; the body is parsed when there is one. A token is a Bearer unless it names its scheme (`Basic …`). */
export const callJson = async (base: string, method: string, path: string, token?: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: /^(Basic|Bearer) /.test(token) ? token : `Bearer ${token}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined
  })
  const text = await res.text()
  return { status: res.status, body: (text.startsWith("{") ? JSON.parse(text) : {}) as any }
}

/** `herald <args>` that must succeed; returns its JSON output. */
export const cliFor = (env: Record<string, string>) => async (...args: Array<string>) => {
  const r = await heraldCommand(args, env)
  if (r.code !== 0) throw new Error(`herald ${args.join(" ")} exited with ${r.code}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

/** An owner signed in, and the account's secret key generated with that session. */
export const ownerSession = async (base: string, email: string, password: string) => {
  const jwt = (await callJson(base, "POST", "/api/v1/rcs/auth/login", undefined, { email, password })).body.token as string
  const key = (await callJson(base, "POST", "/api/v1/app/developer/secret-key", jwt)).body.secret_key as string
  return { jwt, key }
}
