/**
 * A browser as the console's server side meets it, without a browser: a cookie jar kept from the
 * Set-Cookie headers, the CSRF token its page would hold, and the console's origin on writes.
 * `base` is read on every call, so one "browser" can follow a node that changes.
 */
export const consoleBrowser = (base: () => string, password: string) => {
  const jar = new Map<string, string>()
  let csrf = ""
  /** The Cookie header the browser would send (every cookie of the jar). */
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ")
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    options: { readonly csrf?: boolean; readonly headers?: Record<string, string>; readonly on?: string } = {}
  ) => {
    const origin = options.on ?? base()
    const headers: Record<string, string> = {
      ...(jar.size > 0 ? { cookie: cookieHeader() } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...(method !== "GET" && options.csrf !== false ? { "x-csrf-token": csrf, origin } : {}),
      ...options.headers
    }
    const r = await fetch(`${origin}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: "manual" })
    const setCookies = r.headers.getSetCookie()
    for (const line of setCookies) {
      const [pair] = line.split(";")
      const at = pair!.indexOf("=")
      const name = pair!.slice(0, at)
      const value = pair!.slice(at + 1)
      if (value === "" || /Max-Age=0/i.test(line)) jar.delete(name)
      else jar.set(name, value)
    }
    const text = await r.text()
    let json: any
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    if (json?.csrf_token !== undefined && (path.startsWith("/console/api/session") || path.startsWith("/console/api/ops/session"))) csrf = json.csrf_token
    return { status: r.status, body: json, text, setCookies, headers: r.headers }
  }
  const signIn = async (email: string, pass = password, extra: Record<string, unknown> = {}) => call("POST", "/console/api/session", { email, password: pass, ...extra })
  return { call, signIn, jar, cookieHeader, csrf: () => csrf, setCsrf: (value: string) => (csrf = value) }
}

export type ConsoleBrowser = ReturnType<typeof consoleBrowser>

/**
 * The console's live stream (GET /console/api/live) opened with `cookie`: the broadcast_progress
 * events as they come, and `ended`, which resolves when the stream ends (the server ended it, or
 * `close`).
 */
export const openLive = async (base: string, cookie: string) => {
  const controller = new AbortController()
  const r = await fetch(`${base}/console/api/live`, { headers: { cookie }, signal: controller.signal })
  const events: Array<any> = []
  let over = false
  const ended = (async () => {
    if (r.body === null) return
    const decoder = new TextDecoder()
    let buffer = ""
    try {
      for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        let end: number
        while ((end = buffer.indexOf("\n\n")) !== -1) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = block.split("\n").find((l) => l.startsWith("data: "))
          if (block.includes("event: broadcast_progress") && data !== undefined) events.push(JSON.parse(data.slice(6)))
        }
      }
    } catch {
      // aborted
    }
    over = true
  })()
  return { response: r, events, ended, isEnded: () => over, close: () => (controller.abort(), ended) }
}
