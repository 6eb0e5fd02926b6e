// The console's one way to the server: JSON in and out, the session's CSRF token on every request
// that changes something, and a 401 anywhere (but where a 401 is an answer, as at sign-in) taken as
// "the session is gone": the handler the app registers sends the person back to sign-in.

/** An error answer (`{success: false, code, message}`), or a failure to reach the server (status 0). */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly body: unknown

  constructor(status: number, code: string, message: string, body: unknown = null) {
    super(message)
    this.status = status
    this.code = code
    this.body = body
  }
}

let csrfToken: string | null = null
let unauthorized: () => void = () => {}

/** The session's CSRF token, from GET /console/api/session; null when signed out. */
export const setCsrfToken = (token: string | null): void => {
  csrfToken = token
}

/** What to do when a call answers 401: the app goes back to sign-in. */
export const onUnauthorized = (handler: () => void): void => {
  unauthorized = handler
}

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface RequestOptions {
  readonly body?: unknown
  readonly signal?: AbortSignal
  /** Sent as x-csrf-token instead of the session's (the operator view has its own). */
  readonly csrf?: string | null
  /** false: a 401 is an answer like any other (sign-in, the operator view), not the end of the session. */
  readonly signOutOn401?: boolean
  readonly headers?: Readonly<Record<string, string>>
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** The message of an error for a person. */
export const errorMessage = (error: unknown): string => {
  const text = error instanceof Error ? error.message : ""
  return text === "" ? "Something went wrong." : text[0]!.toUpperCase() + text.slice(1)
}

export const isAbort = (error: unknown): boolean => error instanceof DOMException && error.name === "AbortError"

export async function request<T>(method: Method, url: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers }
  if (method !== "GET") {
    const token = options.csrf ?? csrfToken
    if (token !== null) headers["x-csrf-token"] = token
  }
  let body: string | undefined
  if (options.body !== undefined) {
    headers["content-type"] = "application/json"
    body = JSON.stringify(options.body)
  }
  let response: Response
  try {
    response = await fetch(url, {
      method,
      headers,
      body,
      credentials: "same-origin",
      cache: "no-store",
      ...(options.signal !== undefined ? { signal: options.signal } : {})
    })
  } catch (cause) {
    if (isAbort(cause)) throw cause
    throw new ApiError(0, "network", "Could not reach the server. Check the connection and try again.")
  }
  const text = await response.text()
  let json: unknown = null
  if (text !== "") {
    try {
      json = JSON.parse(text)
    } catch {
      json = null
    }
  }
  if (response.ok && isRecord(json) && json["success"] !== false) return json as T
  if (response.ok && text === "") return { success: true } as T
  const code = isRecord(json) && typeof json["code"] === "string" ? json["code"] : `http_${response.status}`
  const given = isRecord(json) && typeof json["message"] === "string" ? json["message"] : undefined
  const detail = isRecord(json) && typeof json["detail"] === "string" ? json["detail"] : undefined
  // Some answers put the explanation for people in detail, the message being the code again.
  const message = given !== undefined
    ? detail !== undefined && detail !== given ? `${given}: ${detail}` : given
    : response.ok ? "The server's answer could not be read." : `The server answered ${response.status} ${response.statusText}`.trim() + "."
  if (response.status === 401 && options.signOutOn401 !== false) unauthorized()
  throw new ApiError(response.status, code, message, json)
}

/** Query string from the defined values of `params` ("" when none). */
export const query = (params: Readonly<Record<string, string | number | undefined | null>>): string => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value))
  }
  const text = search.toString()
  return text === "" ? "" : `?${text}`
}

/** The REST API through the console: `/console/api/v1/<path>` is served as `/api/v1/<path>`. */
const V1 = "/console/api/v1"

export const api = {
  get: <T>(path: string, signal?: AbortSignal): Promise<T> => request<T>("GET", V1 + path, signal !== undefined ? { signal } : {}),
  post: <T>(path: string, body?: unknown, headers?: Readonly<Record<string, string>>): Promise<T> =>
    request<T>("POST", V1 + path, { body: body ?? {}, ...(headers !== undefined ? { headers } : {}) }),
  put: <T>(path: string, body: unknown): Promise<T> => request<T>("PUT", V1 + path, { body }),
  del: <T>(path: string): Promise<T> => request<T>("DELETE", V1 + path)
}

/** A fresh Idempotency-Key, so that a repeated click does not make two of a thing. */
export const idempotencyKey = (): string =>
  typeof crypto.randomUUID === "function"
    ? crypto.randomUUID()
    : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("")
