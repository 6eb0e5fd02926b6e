import type { ErrorObject, ValidateFunction } from "ajv"
import Ajv2020 from "ajv/dist/2020.js"
import { afterAll, afterEach, expect } from "vitest"

/**
 * Every answer an end-to-end test gets from Herald's REST API is held to the OpenAPI document the
 * node serves (issue 34, item 9): the status must be one the operation declares, and a JSON body
 * must be valid against the schema declared for that status. A test that received an answer the
 * document does not describe fails, with the operation, the status and the schema's complaint, so
 * the document cannot drift from the server again.
 *
 * A vitest setup file (vitest.config.ts), active for test/e2e only: it wraps `globalThis.fetch`;
 * for a request whose path is one of the document's paths it reads a copy of the answer, fetches
 * and caches the document of the node that answered (GET /api/v1/openapi.json), and checks the
 * answer with ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect). Answers of other routes (GraphQL,
 * the console, the simulators, webhook receivers) and of servers that serve no document are not
 * checked. Requests a test's child processes make (the CLI) are not seen.
 */

type Json = Record<string, any>

interface Document {
  readonly spec: Json
  readonly ajv: InstanceType<typeof Ajv2020.default>
  readonly paths: ReadonlyArray<{ readonly template: string; readonly pattern: RegExp; readonly segments: ReadonlyArray<boolean> }>
  readonly validators: Map<string, ValidateFunction>
}

const ROOT = "https://herald.invalid/openapi.json"
const METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options"])
const FORMATS: Record<string, RegExp | ((value: string) => boolean)> = {
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  "date-time": (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) && !Number.isNaN(Date.parse(value)),
  email: /^[^\s@]+@[^\s@]+$/,
  uri: (value) => URL.canParse(value)
}

const active = (expect.getState().testPath ?? "").includes("/test/e2e/")
const originalFetch = globalThis.fetch

/**
 * Effect's JSON Schema of `Schema.Unknown` carries `$id: "/schemas/unknown"` (anything goes);
 * the same relative id at several places of one document is ambiguous to a validator. Dropping
 * the id changes nothing a schema accepts.
 */
const withoutUnknownIds = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(withoutUnknownIds)
  if (typeof node !== "object" || node === null) return node
  return Object.fromEntries(Object.entries(node).filter(([key, value]) => !(key === "$id" && value === "/schemas/unknown")).map(([key, value]) => [key, withoutUnknownIds(value)]))
}

export const compileDocument = (spec: Json): Document => {
  const ajv = new Ajv2020.default({ allErrors: true, strict: false, validateFormats: true })
  for (const [name, check] of Object.entries(FORMATS)) ajv.addFormat(name, check instanceof RegExp ? check : { validate: check })
  ajv.addSchema({ ...(withoutUnknownIds(spec) as Json), $id: ROOT })
  const paths = Object.keys(spec.paths).map((template) => {
    const parts = template.split("/")
    return {
      template,
      pattern: new RegExp(`^${parts.map((part) => (/^\{[^}]+\}$/.test(part) ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}$`),
      segments: parts.map((part) => !/^\{[^}]+\}$/.test(part))
    }
  })
  return { spec, ajv, paths, validators: new Map() }
}

/**
 * The document's path a request path is, as the router finds it: among the paths that take the
 * method (a GET's for a HEAD), literal segments win over parameters, left to right; a path no
 * operation of that method matches is the most literal one (where the edge answers 405).
 */
const templateOf = (document: Document, method: string, pathname: string): string | undefined => {
  const all = document.paths.filter((p) => p.pattern.test(pathname))
  const takes = (template: string) => {
    const item = document.spec.paths[template] as Json
    return item[method] !== undefined || (method === "head" && item.get !== undefined)
  }
  const matches = all.some((p) => takes(p.template)) ? all.filter((p) => takes(p.template)) : all
  matches.sort((a, b) => {
    for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
      if (a.segments[i] !== b.segments[i]) return a.segments[i] ? -1 : 1
    }
    return 0
  })
  return matches[0]?.template
}

/** Documents by origin: a node's own, once it served one; undefined for a server that serves none. */
const documents = new Map<string, Promise<Document | undefined>>()
let anyDocument: Promise<Document | undefined> | undefined

const documentOf = (origin: string): Promise<Document | undefined> => {
  let known = documents.get(origin)
  if (known === undefined) {
    known = originalFetch(`${origin}/api/v1/openapi.json`).then(
      async (res) => {
        const text = await res.text()
        if (res.status !== 200 || !text.startsWith("{")) return undefined
        const spec = JSON.parse(text) as Json
        return typeof spec.openapi === "string" && typeof spec.paths === "object" ? compileDocument(spec) : undefined
      },
      // The node went away after answering (a crash test): every node serves the same document.
      () => {
        documents.delete(origin)
        return anyDocument
      }
    )
    documents.set(origin, known)
    const fetched = known
    anyDocument ??= fetched.then((doc) => doc ?? undefined)
  }
  return known
}

const pointer = (...parts: Array<string>) => parts.map((part) => part.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")

const validatorOf = (document: Document, at: string): ValidateFunction => {
  let validate = document.validators.get(at)
  if (validate === undefined) document.validators.set(at, validate = document.ajv.compile({ $ref: `${ROOT}#/${at}` }))
  return validate
}

const describeErrors = (errors: ReadonlyArray<ErrorObject> | null | undefined) =>
  (errors ?? []).slice(0, 8).map((e) => `${e.instancePath || "(body)"} ${e.message}${e.params && Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : ""}`).join("; ")

/** What is wrong with an answer, by the document; undefined when it is what the document says. */
export const problemWith = (document: Document, method: string, pathname: string, status: number, contentType: string, text: string): string | undefined => {
  const lower = method.toLowerCase()
  const template = templateOf(document, lower, pathname)
  if (template === undefined) return undefined
  const item = document.spec.paths[template] as Json
  const operation = (item[lower] ?? (lower === "head" ? item.get : undefined)) as Json | undefined
  const where = `${method} ${pathname} (${template})`
  if (operation === undefined) {
    // A method the path does not take: the edge's 405, with the methods it takes.
    const declared = Object.keys(item).filter((m) => METHODS.has(m))
    return status === 405 ? undefined : `${where}: the document has no ${method} on this path (it has ${declared.join(", ")}), yet it answered ${status}`
  }
  const name = `${method} ${template} (${operation.operationId ?? "no operationId"})`
  const statusKey = [String(status), `${String(status)[0]}XX`, "default"].find((key) => operation.responses?.[key] !== undefined)
  if (statusKey === undefined) {
    return `${name} answered ${status}, a status the document does not declare for it (it declares ${Object.keys(operation.responses ?? {}).join(", ")}); body: ${text.slice(0, 300)}`
  }
  if (lower === "head" || text.length === 0) return undefined
  const content = (operation.responses[statusKey].content ?? {}) as Json
  const isJson = /^application\/(.+\+)?json\b/i.test(contentType)
  if (!isJson) return undefined
  if (content["application/json"]?.schema === undefined) {
    return `${name} answered ${status} with a JSON body, which the document does not declare for that status; body: ${text.slice(0, 300)}`
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return `${name} answered ${status} with a body that is not JSON: ${text.slice(0, 200)}`
  }
  const at = pointer("paths", template, operation === item[lower] ? lower : "get", "responses", statusKey, "content", "application/json", "schema")
  const validate = validatorOf(document, at)
  if (validate(body)) return undefined
  return `${name} answered ${status} with a body its schema refuses: ${describeErrors(validate.errors)}; body: ${text.slice(0, 400)}`
}

interface Problem {
  readonly test: string | undefined
  readonly message: string
}

const problems: Array<Problem> = []
const pending = new Set<Promise<void>>()

const check = async (method: string, url: URL, response: Response) => {
  let text: string
  try {
    text = await response.text()
  } catch {
    // The request was aborted or the connection broke mid-body: nothing to hold to the document.
    return
  }
  const document = await documentOf(url.origin).catch(() => undefined)
  if (document === undefined) return
  const message = problemWith(document, method, url.pathname, response.status, response.headers.get("content-type") ?? "", text)
  if (message !== undefined) problems.push({ test: testName(), message })
}

const testName = () => expect.getState().currentTestName

const checkingFetch: typeof fetch = async (input, init) => {
  const request = input instanceof Request ? input : undefined
  const url = new URL(request?.url ?? (input instanceof URL ? input.href : String(input)))
  const method = (init?.method ?? request?.method ?? "GET").toUpperCase()
  const response = await originalFetch(input, init)
  if (!url.pathname.startsWith("/api/") && !url.pathname.startsWith("/health/")) return response
  const name = testName()
  const checking = check(method, url, response.clone()).catch((error) => {
    problems.push({ test: name, message: `${method} ${url.pathname}: the answer could not be checked against the document: ${String(error)}` })
  })
  pending.add(checking)
  void checking.finally(() => pending.delete(checking))
  return response
}

/** Waits for the checks still reading their answers; an answer that never ends (a stream) is not waited for past a while. */
const settle = async () => {
  if (pending.size === 0) return
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([Promise.allSettled([...pending]), new Promise((resolve) => (timer = setTimeout(resolve, 15_000)))])
  clearTimeout(timer)
}

const report = (found: ReadonlyArray<Problem>) =>
  new Error(`answers that do not match the served OpenAPI document (test/support/openApiResponses.ts):\n- ${found.map((p) => p.message).join("\n- ")}`)

if (active) {
  globalThis.fetch = checkingFetch

  afterEach(async () => {
    await settle()
    const name = testName()
    const mine = problems.filter((p) => p.test === name)
    if (mine.length === 0) return
    for (const p of mine) problems.splice(problems.indexOf(p), 1)
    throw report(mine)
  })

  // Answers received in set-up and tear-down hooks fail the file.
  afterAll(async () => {
    await settle()
    if (problems.length === 0) return
    const all = problems.splice(0)
    throw report(all)
  })
}
