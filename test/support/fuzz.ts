import { connect } from "node:net"

// Building blocks of the hostile-input fuzz (test/e2e/hostile-input.test.ts): plausible JSON
// from an OpenAPI schema, JSON paths, hostile values and bodies, and raw HTTP over a socket.

/** JSON text written as is where a value goes: numbers JSON.stringify cannot write (1e309, -0). */
export class Raw {
  constructor(readonly text: string) {}
}

/** JSON.stringify that writes `Raw` values verbatim (lone surrogates come out as \ud800 escapes). */
export const encodeJson = (value: unknown): string => {
  if (value instanceof Raw) return value.text
  if (Array.isArray(value)) return `[${value.map(encodeJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${encodeJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

export type JsonPath = ReadonlyArray<string | number>

type Schema = Record<string, any>

/** Follows `$ref`s (#/components/schemas/X) of the document. */
export const resolveRef = (doc: Schema, schema: Schema | undefined): Schema => {
  let s = schema ?? {}
  for (let i = 0; i < 20 && typeof s.$ref === "string"; i++) {
    const name = String(s.$ref).split("/").pop()!
    s = { ...doc.components?.schemas?.[name], ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "$ref")) }
  }
  return s
}

/**
 * A plausible value for `schema`: required properties only (or every property with `full`), the
 * first enum value, "x" for strings, 1 for numbers, one item for arrays. `named(key)` may give a
 * better value for a property by its name (an id of a fixture, a date).
 */
export const plausible = (doc: Schema, schema: Schema | undefined, named: (key: string) => unknown, options: { readonly full?: boolean } = {}, depth = 0): unknown => {
  const s = resolveRef(doc, schema)
  if (depth > 8) return "x"
  const alternatives = (s.anyOf ?? s.oneOf) as Array<Schema> | undefined
  if (alternatives) {
    const first = alternatives.map((a) => resolveRef(doc, a)).find((a) => a.type !== "null") ?? {}
    return plausible(doc, first, named, options, depth + 1)
  }
  if (Array.isArray(s.allOf) && s.allOf.length > 0) return plausible(doc, { ...s, allOf: undefined, ...resolveRef(doc, s.allOf[0]) }, named, options, depth + 1)
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0]
  switch (s.type) {
    case "object": {
      const required = new Set<string>(s.required ?? [])
      const out: Record<string, unknown> = {}
      for (const [key, prop] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
        if (!required.has(key) && !options.full) continue
        const given = named(key)
        out[key] = given !== undefined ? given : plausible(doc, prop, named, options, depth + 1)
      }
      return out
    }
    case "array":
      return [plausible(doc, s.items, named, options, depth + 1)]
    case "integer":
    case "number":
      return typeof s.minimum === "number" && s.minimum > 1 ? s.minimum : 1
    case "boolean":
      return true
    case "string":
      if (s.format === "uuid") return "00000000-0000-4000-8000-000000000001"
      if (typeof s.description === "string" && s.description.includes("decoded into a Date")) return new Date(Date.now() + 86_400_000).toISOString()
      return typeof s.minLength === "number" && s.minLength > 1 ? "x".repeat(s.minLength) : "x"
    default:
      return "x"
  }
}

/** Every path to a node under the root (objects' keys and arrays' items, at any depth). */
export const valuePaths = (value: unknown, prefix: JsonPath = []): Array<JsonPath> => {
  const out: Array<JsonPath> = []
  if (Array.isArray(value)) {
    value.forEach((v, i) => out.push([...prefix, i], ...valuePaths(v, [...prefix, i])))
  } else if (value !== null && typeof value === "object" && !(value instanceof Raw)) {
    for (const [k, v] of Object.entries(value)) out.push([...prefix, k], ...valuePaths(v, [...prefix, k]))
  }
  return out
}

/** Paths to the objects of a value, the root included. */
export const objectPaths = (value: unknown, prefix: JsonPath = []): Array<JsonPath> => {
  const out: Array<JsonPath> = []
  if (value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Raw)) out.push(prefix)
  if (value !== null && typeof value === "object" && !(value instanceof Raw)) {
    for (const [k, v] of Object.entries(value)) out.push(...objectPaths(v, [...prefix, Array.isArray(value) ? Number(k) : k]))
  }
  return out
}

export const getAt = (value: unknown, path: JsonPath): unknown => {
  let v: any = value
  for (const k of path) {
    if (v === null || typeof v !== "object" || v instanceof Raw) return undefined
    v = v[k]
  }
  return v
}

const cloneNode = (v: unknown): any => (Array.isArray(v) ? [...v] : v !== null && typeof v === "object" && !(v instanceof Raw) ? { ...v } : v)

/** A copy of `value` with `path` set (intermediate objects made as needed). */
export const setAt = (value: unknown, path: JsonPath, to: unknown): unknown => {
  if (path.length === 0) return to
  const root = cloneNode(value !== null && typeof value === "object" && !(value instanceof Raw) ? value : {})
  let node = root
  for (let i = 0; i < path.length - 1; i++) {
    const next = node[path[i]!]
    node[path[i]!] = cloneNode(next !== null && typeof next === "object" && !(next instanceof Raw) ? next : {})
    node = node[path[i]!]
  }
  node[path[path.length - 1]!] = to
  return root
}

/** A copy of `value` without `path` (an array item is spliced out). */
export const removeAt = (value: unknown, path: JsonPath): unknown => {
  if (path.length === 0) return undefined
  const parent = getAt(value, path.slice(0, -1))
  if (parent === null || typeof parent !== "object" || parent instanceof Raw) return value
  const last = path[path.length - 1]!
  const copy = cloneNode(parent)
  if (Array.isArray(copy)) copy.splice(Number(last), 1)
  else delete copy[last]
  return setAt(value, path.slice(0, -1), copy)
}

export const FOREIGN_UUID = "7c0a2b0e-5f4e-4b8a-9d1c-3e2f1a0b9c8d"
export const ZERO_UUID = "00000000-0000-0000-0000-000000000000"
export const DEEP_ARRAYS = "[".repeat(10_000) + "]".repeat(10_000)
const MEGABYTE = "x".repeat(1_000_000)
const TEN_THOUSAND = "x".repeat(10_000)

export const EDGE_DATES: ReadonlyArray<string> = [
  "0000-01-01T00:00:00Z",
  "+275760-09-13T00:00:00.000Z",
  "+275760-09-13T00:00:00.001Z",
  "-271821-04-20T00:00:00Z",
  "9999-12-31T23:59:59.999Z",
  "2025-02-30T00:00:00Z",
  "1970-01-01T00:00:00Z",
  "tomorrow",
  "2025-13-01",
  "-000001-01-01T00:00:00Z"
]

/** Values to put where a field goes: wrong types, huge and odd strings, numbers and dates, ids. */
export const HOSTILE_VALUES: ReadonlyArray<unknown> = [
  null,
  true,
  0,
  -1,
  0.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  new Raw("-0"),
  new Raw("1e309"),
  new Raw("123456789012345678901234567890"),
  [],
  {},
  [null],
  { a: 1 },
  [[[[[]]]]],
  "",
  " ",
  TEN_THOUSAND,
  MEGABYTE,
  "a\u0000b",
  "a\ud800b",
  "\udc00",
  "\u202eevil\u202c",
  "שלום עולם",
  "😀👍🏽👨‍👩‍👧",
  "\u200b\u200d\ufeff",
  "\u0085\u2028\u2029",
  ...EDGE_DATES,
  FOREIGN_UUID,
  ZERO_UUID,
  "00000000-0000-0000-0000-00000000000g",
  "../..",
  "NaN",
  "-1",
  "1e309",
  "' OR 1=1 --",
  "%00",
  "__proto__",
  "+91987654123" + "4".repeat(300),
  "javascript:alert(1)",
  "http://127.0.0.1:1/x",
  "https://example.com/" + TEN_THOUSAND
]

/**
 * Values aimed at a field by its name (the last key of its path): plausible types with hostile
 * content, so that they pass a schema and reach the handler. `$…` strings are placeholders the
 * test resolves when it sends (fixtures in upper case, another account's bot, …).
 */
export const FIELD_VALUES: ReadonlyArray<readonly [RegExp, ReadonlyArray<unknown>]> = [
  [/(_at|^from|^to_date)$/, [...EDGE_DATES, "2025-01-01", "2025-01-01T00:00:00+99:99", "2025-06-01T24:00:00Z", 0, 1e15]],
  [/(^|_)id$/, ["$upperBot", "$paddedBot", "$foreignBot", "$pendingBot", "$deletedTemplate", "$deletedList", FOREIGN_UUID, ZERO_UUID, "00000000-0000-0000-0000-00000000000g", "x", "../..", TEN_THOUSAND, "%00", "{}"]],
  [/^(to|phone)$/, ["+91 98765 41234", "919876541234", "+1", "+0", "+919876541234;ext=1", "tel:+919876541234", "+٩١٩٨٧٦٥٤١٢٣٤", "+91987654123" + "4".repeat(300), "+919876541234\n", "00919876541234", "+", "++919876541234"]],
  [/email$/, ["$upperSpareEmail", " spare@fuzz.io ", "a@b", "x@" + TEN_THOUSAND, "Ü@example.com", "a@b@c", "@", "a@[127.0.0.1]", "\"quoted\"@example.com"]],
  [/url$/, ["http://127.0.0.1/x", "https://[::1]/", "https://example.com:99999/", "ftp://example.com/", "https://user:pw@example.com/", "https://exa mple.com/", "https://例え.jp/", "https://" + TEN_THOUSAND, "//example.com", "https://169.254.169.254/latest/meta-data", "data:text/plain,hi", "https://example.com/%00", "HTTPS://EXAMPLE.COM/hook"]],
  [/(name|keyword|text|title|description|label|reason|postback_data)$/, ["   ", "{{name}}", "{{", "%s%n%x", "a".repeat(2049), "😀".repeat(5_000), "a\u0000b", MEGABYTE, "\r\n\r\nHTTP/1.1 200 OK"]],
  [/^(scopes|events|assigned_bots|cards|suggestions|contacts)$/, [["*"], ["*", "$bot"], [FOREIGN_UUID], ["$pendingBot"], ["$foreignBot"], Array.from({ length: 1_001 }, () => "x"), ["contacts:read", "contacts:read"], [""], ["$upperBot"], Array.from({ length: 10_000 }, () => ({}))]],
  [/(seconds|limit|count|throughput)$/, [-1, 2_592_001, 1e308, 0.5, "60", 2 ** 31, 2 ** 63, new Raw("1e309")]],
  [/(session_token|^token)$/, ["$ownerJwt", "$apiKeyRaw", "$secretKeyRaw", "a.b.c", "eyJhbGciOiJub25lIn0.e30."]],
  [/password$/, ["", "short", "p".repeat(1_025), "😀".repeat(1_024), "a\u0000b", "$pwPassword"]],
  [/totp_code$/, ["000000", "12345", "1234567", "١٢٣٤٥٦", " 123456", "123 456", "$totp"]],
  [/gstin$/, ["27aapfu0939f1zv", "27AAPFU0939F1ZX", "00AAAAA0000A0Z0", "27AAPFU0939F1Z"]],
  [/^(use_case|match|role|type|height|status)$/, ["owner", "OWNER", "admin", "Promotional", "", "*"]],
  [/^(active|can_broadcast)$/, ["true", 1, "yes"]],
  // The public messaging API (WhatsApp): its fields are named in camelCase, as Interakt's.
  [/^fullPhoneNumber$/, ["+91 98765 41234", "919876541234", "+1", "0", "tel:+919876541234", "+٩١٩٨٧٦٥٤١٢٣٤", "91987654123" + "4".repeat(300), "++919876541234", 919876541234, 9.19876541234e11]],
  [/^(mediaUrl|url)$/, [
    "http://example.com/a.png",
    "https://example.com/a b.png",
    "https://example.com/a.png\n",
    "https:///a.png",
    "https://example.com/" + "a".repeat(2100),
    "file:///etc/passwd",
    "//example.com/a.png",
    "https://example.com/a.png#{{1}}"
  ]],
  [/^(message|header|footer|button|fileName|callbackData|caption)$/, ["   ", "a".repeat(4097), "a".repeat(1025), "😀".repeat(1025), "a".repeat(61), "a".repeat(513), "a/b.pdf", "..", "a\u0000b", "a\nb", MEGABYTE, "{{1}}"]],
  [/^(languageCode|language)$/, ["en_US", "EN", "en-US", "xx", "hi", "pt_BR", " en", "en\u0000", "*"]],
  [/^category$/, ["utility", "MARKETING", "AUTHENTICATION", "SERVICE", "Utility", "utility\u0000"]],
  [/^type$/, [
    ...["Text", "Image", "Video", "Audio", "Sticker", "Document", "InteractiveButton", "InteractiveList", "Template", "text", "TEMPLATE"],
    ...["HEADER", "BODY", "FOOTER", "BUTTONS", "CAROUSEL", "QUICK_REPLY", "URL", "PHONE_NUMBER", "COPY_CODE", "OTP", "ORDER_DETAILS"]
  ]],
  [/^(format|otp_type)$/, ["TEXT", "IMAGE", "VIDEO", "DOCUMENT", "LOCATION", "text", "ONE_TAP", "ZERO_TAP", "COPY_CODE"]],
  [/^(headerValues|bodyValues)$/, [
    [],
    ["Asha"],
    ["Asha", "A-1", "extra"],
    ["", "A-1"],
    ["a\nb", "A-1"],
    ["a     b", "A-1"],
    [1, 2],
    ["x".repeat(1100), "A-1"],
    "Asha",
    [null, null],
    ["https://example.com/a.png"],
    [["Asha"], ["A-1"]]
  ]],
  [/^buttonValues$/, [{}, { "0": ["x"] }, { "1": [] }, { "1": ["x", "y"] }, { "9": ["x"] }, { "-1": ["x"] }, { "01": ["x"] }, { "1": "x" }, { "1": [1] }, { "1": ["x".repeat(2100)] }, [["x"]], { "1.0": ["x"] }]],
  [/^(carouselCards|orderDetails)$/, [[], [{}], {}, [{ bodyValues: [] }, { bodyValues: [] }], { status: "pending", items: [], subtotal: { value: 1, offset: 100 } }]],
  [/^(buttons|rows)$/, [
    [],
    [{ id: "a", title: "A" }, { id: "a", title: "B" }],
    [{ id: "a", title: "A" }, { id: "b", title: "A" }],
    Array.from({ length: 4 }, (_, i) => ({ id: `b${i}`, title: `B${i}` })),
    Array.from({ length: 11 }, (_, i) => ({ id: `r${i}`, title: `R${i}` })),
    [{ type: "QUICK_REPLY", text: "Yes" }],
    [{ type: "URL", text: "Go", url: "https://example.com/{{1}}" }],
    Array.from({ length: 11 }, () => ({ type: "QUICK_REPLY", text: "Yes" }))
  ]],
  [/^sections$/, [
    [],
    [{ rows: [{ id: "a", title: "A" }] }, { rows: [{ id: "b", title: "B" }] }],
    Array.from({ length: 11 }, (_, i) => ({ title: `S${i}`, rows: [{ id: `r${i}`, title: "R" }] })),
    [{ title: "S", rows: [] }]
  ]],
  [/^components$/, [
    [],
    [{ type: "BODY" }],
    [{ type: "BODY", text: "{{1}}" }],
    [{ type: "BODY", text: "Hi {{2}} there" }],
    [{ type: "BODY", text: "Hi" }, { type: "BODY", text: "Again" }],
    [{ type: "FOOTER", text: "only a footer" }],
    [{ type: "UNKNOWN" }],
    [{ type: "BODY", text: "Hello {{1}} and {{1}} again", example: { body_text: [["a"]] } }]
  ]],
  [/^(example|body_text|header_text|header_handle)$/, [[], [[]], ["a"], [["a", "b", "c"]], { body_text: [] }, "x", [[1, 2]], [[""]]]],
  [/^(code_expiration_minutes|add_security_recommendation)$/, [0, 91, 1.5, "10", -1]],
  [/^phone_number$/, ["+91 98765 41234", "1".repeat(21), "tel:123", ""]]
]

/** Hostile values aimed at the field at `path`, if its name says what it holds. */
export const fieldValues = (path: JsonPath): ReadonlyArray<unknown> => {
  const last = [...path].reverse().find((k) => typeof k === "string")
  if (last === undefined) return []
  return FIELD_VALUES.filter(([re]) => re.test(last)).flatMap(([, values]) => values)
}

/** Headers sent besides the request's own: odd encodings and proxies' headers. */
export const EXTRA_HEADERS: ReadonlyArray<Readonly<Record<string, string>>> = [
  { "content-encoding": "gzip" },
  { "content-encoding": "br, identity" },
  { accept: "application/xml" },
  { "accept-charset": "utf-16" },
  { "x-forwarded-for": "not an address, 999.999.999.999" },
  { "x-request-id": "x".repeat(8_000) },
  { "if-none-match": "*" },
  { range: "bytes=0-1" },
  { origin: "https://evil.example" }
]

/** Names of fields no schema declares. */
export const UNKNOWN_KEYS: ReadonlyArray<string> = ["zz_unknown", "__proto__", "constructor", "", "k\ud800", "a\u0000b", TEN_THOUSAND]

/** Whole bodies that replace a valid one. */
export const WHOLE_BODIES: ReadonlyArray<string | Buffer> = [
  "",
  "null",
  "[]",
  "{}",
  "42",
  "\"a string\"",
  "true",
  DEEP_ARRAYS,
  `{"name": ${DEEP_ARRAYS}}`,
  "{\"a\":",
  "{\"a\":1}}",
  "{'a': 1}",
  "\u0000",
  "\ufeff{}",
  "{\"__proto__\":{\"polluted\":true},\"constructor\":{\"prototype\":{\"polluted\":true}}}",
  "{\"a\":1,\"a\":2}",
  Buffer.concat([Buffer.from("{\"name\":\"a"), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from("b\"}")]),
  Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
  "{\"a\":" + "1".repeat(100_000) + "}"
]

export const b64url = (text: string) => Buffer.from(text).toString("base64url")

/** Cursors that decode to nonsense a page query could trip on. */
export const HOSTILE_CURSORS: ReadonlyArray<string> = [
  b64url(JSON.stringify(["2025-02-30T00:00:00.000000Z", FOREIGN_UUID])),
  b64url(JSON.stringify(["0000-01-01T00:00:00.000000Z", FOREIGN_UUID])),
  b64url(JSON.stringify(["+275760-09-13T00:00:00.000000Z", FOREIGN_UUID])),
  b64url(JSON.stringify(["9999999999999999999"])),
  b64url(JSON.stringify(["9999999999999999999", FOREIGN_UUID])),
  b64url(JSON.stringify([2147483648])),
  b64url(JSON.stringify([2147483648, FOREIGN_UUID])),
  b64url(JSON.stringify(["2025-01-01T00:00:00.000000Z", "not-a-uuid"])),
  b64url(JSON.stringify(["2025-01-01T00:00:00.000000Z", "a\u0000b"])),
  b64url(JSON.stringify(["2025-01-01T00:00:00.000000Z", FOREIGN_UUID])),
  b64url(JSON.stringify(["2025-01-01T00:00:00Z", FOREIGN_UUID, "extra"])),
  b64url(JSON.stringify(["9223372036854775807"])),
  b64url(JSON.stringify(["-9223372036854775808"])),
  b64url(JSON.stringify(["1"])),
  b64url(JSON.stringify([1.5])),
  b64url(JSON.stringify([null, null])),
  b64url(JSON.stringify([])),
  b64url(JSON.stringify({ a: 1 })),
  b64url("[" .repeat(10_000)),
  b64url("garbage"),
  b64url("\u0000"),
  "!!!not-base64!!!",
  "%00",
  "%ED%A0%80",
  TEN_THOUSAND
]

/** Query values (already percent-encoded) for any parameter. */
export const HOSTILE_QUERY_VALUES: ReadonlyArray<string> = [
  "-1",
  "0",
  "1e309",
  "abc",
  "99999999999999999999",
  "1.5",
  "",
  "%00",
  "a%00b",
  "%ED%A0%80",
  "unknown",
  ...EDGE_DATES.map(encodeURIComponent),
  FOREIGN_UUID,
  TEN_THOUSAND
]

/** Path parameter values (already percent-encoded). */
export const HOSTILE_PATH_VALUES: ReadonlyArray<string> = [
  "%00",
  "%ED%A0%80",
  TEN_THOUSAND,
  FOREIGN_UUID,
  ZERO_UUID,
  "..",
  "%2e%2e",
  "a%2Fb",
  "%20",
  "-1",
  "1e309",
  "%F0%9F%98%80",
  "%27%20OR%20%271%27%3D%271"
]

/** Content types a JSON route should refuse (415); `null` sends no Content-Type at all. */
export const HOSTILE_CONTENT_TYPES: ReadonlyArray<string | null> = [
  "multipart/form-data",
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/json; charset=utf-16",
  "application/xml",
  null,
  "application/json; boundary=--",
  "application/x-ndjson",
  "text/csv"
]

/** A hostile body for a CSV import. */
export const HOSTILE_CSV: ReadonlyArray<string | Buffer> = [
  "phone,name\n+919876541234,A\n",
  "phone,name\n+919876541234,a\u0000b\n",
  Buffer.concat([Buffer.from("phone,name\n+919876541234,a"), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from("\n")]),
  "phone,name\n\"+919876541234,unterminated\n",
  "\ufeffphone,name\n+919876541234,A\n",
  "phone\n" + "x".repeat(100_000) + "\n",
  "phone," + Array.from({ length: 5_000 }, (_, i) => `c${i}`).join(",") + "\n+919876541234\n",
  "",
  "name\nA\n"
]

export interface RawAnswer {
  readonly status: number
  readonly head: string
  readonly body: string
  readonly ms: number
}

/**
 * Writes `request` as is on a new socket and reads until the server closes it or `timeoutMs`
 * passes (status 0 then). Only the first answer is parsed.
 */
export const rawRequest = (port: number, request: string | Buffer, timeoutMs = 30_000): Promise<RawAnswer> =>
  new Promise((resolve) => {
    const started = Date.now()
    const socket = connect(port, "127.0.0.1")
    let got = Buffer.alloc(0)
    const finish = () => {
      clearTimeout(timer)
      socket.destroy()
      const text = got.toString("utf8")
      const split = text.indexOf("\r\n\r\n")
      const head = split < 0 ? text : text.slice(0, split)
      let body = split < 0 ? "" : text.slice(split + 4)
      const length = /\r\ncontent-length: *(\d+)/i.exec(head)
      if (length) body = Buffer.from(body).subarray(0, Number(length[1])).toString("utf8")
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), head, body, ms: Date.now() - started })
    }
    const timer = setTimeout(finish, timeoutMs)
    socket.on("data", (d) => {
      got = Buffer.concat([got, d])
      // One answer is enough: stop once its declared body has arrived.
      const text = got.toString("latin1")
      const split = text.indexOf("\r\n\r\n")
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split))
      if (split >= 0 && length && got.length >= split + 4 + Number(length[1])) finish()
    })
    socket.on("error", () => finish())
    socket.on("close", () => finish())
    socket.write(request)
  })
