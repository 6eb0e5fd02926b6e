import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import Ajv2020 from "ajv/dist/2020.js"
import type { ErrorObject, ValidateFunction } from "ajv"

/**
 * Meta's own OpenAPI document (vendored, MIT) as the judge of what Herald sends to the Cloud API:
 * the adapter's tests and the gateway simulator both check bodies against it, so a payload Meta
 * would refuse is caught here instead of in production.
 *
 * The document is read and compiled once, on first use (about a quarter of a second), then each check is
 * a compiled ajv function. Its defects are repaired in code (`repair` below), never in the vendored
 * file, so a newer version of Meta's file can be dropped in and the repairs re-checked by the tests.
 */

// The JSON rendering of Meta's YAML (vendor/meta/README.md): the YAML parses in about a second.
const VENDORED_FILE = "vendor/meta/whatsapp-business-messaging-api_v23.0.json"

/**
 * The vendored document, found from this module up: the source runs from src/whatsapp/cloud,
 * the bundle from dist/, and both sit under the package root that holds vendor/.
 */
const vendored = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(dir, VENDORED_FILE)
    if (existsSync(candidate)) return candidate
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`Meta's OpenAPI document (${VENDORED_FILE}) is missing from the package`)
    dir = parent
  }
}
const SEND_PATH = "/{Version}/{Phone-Number-ID}/messages"
const TEMPLATES_PATH = "/{Version}/{WABA-ID}/message_templates"
const ROOT_ID = "urn:meta:whatsapp-business-messaging-api"

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value)

const child = (parent: unknown, key: string): Json => {
  const value = isRecord(parent) ? parent[key] : undefined
  if (!isRecord(value)) throw new Error(`Meta's OpenAPI document has no object at ${key}: the vendored file changed shape`)
  return value
}

// ---------------------------------------------------------------------------------------------
// Repairs. Each makes the schema accept what Meta's API accepts, except two that make it refuse
// what Meta refuses (closeTemplateMessage, requireTemplateCreationFields); none loosens a limit
// the document states.
// ---------------------------------------------------------------------------------------------

/**
 * Every message schema is `allOf: [BaseMessageProperties, {additionalProperties: false, …}]`.
 * `additionalProperties` only sees the properties of its own member, so it refuses
 * `messaging_product`, `to` and every other base property: no valid message passes. Moved to
 * `unevaluatedProperties: false` on the message schema itself (JSON Schema 2020-12), which sees
 * through the allOf: unknown top-level fields are still refused, as the document intends.
 */
const closeOverAllOf = (schemas: Json) => {
  for (const schema of Object.values(schemas)) {
    if (!isRecord(schema) || !Array.isArray(schema.allOf)) continue
    const closed = schema.allOf.filter((member): member is Json => isRecord(member) && member.additionalProperties === false)
    if (closed.length === 0) continue
    for (const member of closed) delete member.additionalProperties
    schema.unevaluatedProperties = false
  }
}

/**
 * TemplateMessage is the one message schema left open (no `additionalProperties` at all), so a
 * misspelt top-level field (`templates`) would pass. Closed like the others.
 */
const closeTemplateMessage = (schemas: Json) => {
  child(schemas, "TemplateMessage").unevaluatedProperties = false
}

/**
 * `biz_opaque_callback_data` is a documented send field ("arbitrary string … up to 512
 * characters", echoed in status webhooks) missing from the base properties; Herald carries its
 * message id in it, so without it every Herald send would be refused once the message schemas are
 * closed.
 */
const addCallbackData = (schemas: Json) => {
  child(child(schemas, "BaseMessageProperties"), "properties").biz_opaque_callback_data = { type: "string", maxLength: 512 }
}

/**
 * `recipient_type` is listed as required, but Meta's reference calls it optional ("individual"
 * by default) and several of the document's own examples ("Send Test Message", "Send Flow
 * Template Message") leave it out.
 */
const recipientTypeOptional = (schemas: Json) => {
  const base = child(schemas, "BaseMessageProperties")
  base.required = (base.required as Array<string>).filter((name) => name !== "recipient_type")
}

/**
 * LanguageObject requires `policy`, whose only value, "deterministic", is also its default; Meta's
 * reference marks it optional and all but one of the document's template examples omit it.
 */
const languagePolicyOptional = (schemas: Json) => {
  const language = child(schemas, "LanguageObject")
  language.required = (language.required as Array<string>).filter((name) => name !== "policy")
}

/**
 * TemplateComponent (the schema the send body really applies to template components):
 * - `index` has the pattern `^[2-6, 11-14]$`, a character class that refuses "0" and "1", the
 *   indexes of the document's own examples. Meta documents 0–9 and its examples send it both as a
 *   string ("0") and as a number (0): both accepted, within 0–9.
 * - `type` lists header/body/button only, but carousel templates are sent with a
 *   `{type: "carousel", cards}` component and limited-time-offer templates with
 *   `{type: "limited_time_offer"}`.
 * - `sub_type` lists quick_reply/url/catalog only, while Meta's button components also take
 *   copy_code (coupon codes), flow (the document's own "Send Flow Template Message"), mpm,
 *   order_details and voice_call; the document's catalog example writes "CATALOG", so the
 *   upper-case spelling of each is accepted too.
 */
const TEMPLATE_COMPONENT_TYPES = ["header", "body", "button", "carousel", "limited_time_offer"]
const TEMPLATE_BUTTON_SUB_TYPES = ["quick_reply", "url", "catalog", "copy_code", "flow", "mpm", "order_details", "voice_call"]

const widenTemplateComponent = (schemas: Json) => {
  const properties = child(child(schemas, "TemplateComponent"), "properties")
  properties.index = {
    description: "Position index of the button, 0-9.",
    anyOf: [{ type: "string", pattern: "^[0-9]$" }, { type: "integer", minimum: 0, maximum: 9 }]
  }
  child(properties, "type").enum = TEMPLATE_COMPONENT_TYPES
  child(properties, "sub_type").enum = [...TEMPLATE_BUTTON_SUB_TYPES, ...TEMPLATE_BUTTON_SUB_TYPES.map((s) => s.toUpperCase())]
}

/**
 * The template creation body's schema was generated from example requests: every field optional.
 * Meta's reference requires name, language, category and components, and category is one of three
 * values; without that an empty object would pass.
 */
const TEMPLATE_CATEGORIES = ["MARKETING", "UTILITY", "AUTHENTICATION"]

const requireTemplateCreationFields = (schema: Json) => {
  schema.required = ["name", "language", "category", "components"]
  child(child(schema, "properties"), "category").enum = TEMPLATE_CATEGORIES
}

const repair = (schemas: Json, templateCreation: Json) => {
  closeOverAllOf(schemas)
  closeTemplateMessage(schemas)
  addCallbackData(schemas)
  recipientTypeOptional(schemas)
  languagePolicyOptional(schemas)
  widenTemplateComponent(schemas)
  requireTemplateCreationFields(templateCreation)
}

// ---------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------

/**
 * `format: url` is Meta's own name (not a JSON Schema format, unknown to ajv, which refuses to
 * compile it in strict mode). Its description says "HTTP/HTTPS only": an absolute http(s) URL.
 */
const isHttpUrl = (value: string) => {
  if (!URL.canParse(value)) return false
  const { protocol, hostname } = new URL(value)
  return (protocol === "https:" || protocol === "http:") && hostname !== ""
}

/**
 * ajv ships no formats (ajv-formats is not a dependency). The standard ones reachable from
 * Message, all in contacts messages, get plain checks: a calendar date, something@somewhere, and
 * an absolute URI.
 */
const isCalendarDate = (value: string) => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (match === null) return false
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])))
  return date.toISOString().startsWith(value)
}
const STANDARD_FORMATS: Record<string, (value: string) => boolean> = {
  date: isCalendarDate,
  email: (value) => /^[^\s@]+@[^\s@]+$/.test(value),
  uri: (value) => URL.canParse(value)
}

interface Compiled {
  /** The member of Message's oneOf each `type` names (the document's discriminator mapping). */
  readonly byType: ReadonlyMap<string, ValidateFunction>
  readonly templateCreation: ValidateFunction
}

/** The JSON schema of an operation's `application/json` request body. */
const requestSchema = (document: unknown, path: string): Json =>
  ["paths", path, "post", "requestBody", "content", "application/json", "schema"].reduce<unknown>((node, key) => child(node, key), document) as Json

const readDocument = () => {
  const document: unknown = JSON.parse(readFileSync(vendored(), "utf8"))
  const schemas = child(child(document, "components"), "schemas")
  if (requestSchema(document, SEND_PATH).$ref !== "#/components/schemas/Message") {
    throw new Error("Meta's send endpoint no longer takes #/components/schemas/Message: re-check metaSchema.ts")
  }
  return { schemas, templateCreation: requestSchema(document, TEMPLATES_PATH) }
}

const newAjv = () => {
  // The default export is the class under Node's ESM-CJS interop; TypeScript (NodeNext) sees the
  // module object, whose `default` is the same class at run time.
  const ajv = new Ajv2020.default({
    allErrors: true,
    // Failing schemas travel with their errors: `description` explains a failed oneOf.
    verbose: true,
    strictSchema: true,
    // Meta's schemas omit `type` beside `required` and `properties` throughout: not a defect.
    strictTypes: false,
    strictTuples: false,
    strictRequired: false
  })
  // OpenAPI annotations, no validation of their own. The discriminator's mapping is applied by
  // `validateCloudMessage` (ajv's discriminator support refuses a `mapping`).
  ajv.addVocabulary(["example", "discriminator"])
  // The document's $refs point at `#/components/schemas/…`: the root keeps that place, and
  // `components` is declared so that strict mode accepts it there.
  ajv.addKeyword("components")
  ajv.addFormat("url", isHttpUrl)
  for (const [name, check] of Object.entries(STANDARD_FORMATS)) ajv.addFormat(name, check)
  return ajv
}

const compile = (): Compiled => {
  const { schemas, templateCreation } = readDocument()
  repair(schemas, templateCreation)
  const ajv = newAjv()
  ajv.addSchema({ $id: ROOT_ID, components: { schemas } })
  const mapping = child(child(schemas, "Message"), "discriminator").mapping
  const byType = new Map<string, ValidateFunction>()
  for (const [type, ref] of Object.entries(isRecord(mapping) ? mapping : {})) {
    byType.set(type, ajv.compile({ $ref: `${ROOT_ID}${String(ref)}` }))
  }
  return { byType, templateCreation: ajv.compile(templateCreation) }
}

let compiled: Compiled | undefined
const validators = (): Compiled => (compiled ??= compile())

// ---------------------------------------------------------------------------------------------
// Problems as sentences
// ---------------------------------------------------------------------------------------------

/** `/interactive/action/buttons/0/reply/title` → `interactive.action.buttons[0].reply.title`. */
const dotted = (instancePath: string) =>
  instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path === "" ? part : `${path}.${part}`), "")

const wording = (error: ErrorObject): string => {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case "unevaluatedProperties":
      return `${String(params.unevaluatedProperty)} is not a field here`
    case "additionalProperties":
      return `${String(params.additionalProperty)} is not a field here`
    case "enum":
      return `must be one of ${(params.allowedValues as Array<unknown>).map((v) => JSON.stringify(v)).join(", ")}`
    case "oneOf": {
      const description = isRecord(error.parentSchema) && typeof error.parentSchema.description === "string"
        ? ` (${error.parentSchema.description.replace(/\*\*/g, "")})`
        : ""
      return params.passingSchemas === null ? `matches none of its allowed shapes${description}` : `matches more than one of its allowed shapes${description}`
    }
    default:
      return error.message ?? error.keyword
  }
}

/**
 * A failed oneOf reports every alternative's errors. When some alternatives were not even the
 * right shape (a required field of theirs is missing), only the others' errors say what is wrong.
 */
const narrowOneOf = (errors: ReadonlyArray<ErrorObject>): ReadonlyArray<ErrorObject> => {
  const dropped = new Set<ErrorObject>()
  for (const failure of errors) {
    if (failure.keyword !== "oneOf" || (failure.params as { passingSchemas: unknown }).passingSchemas !== null) continue
    const branches = (failure.schema as ReadonlyArray<unknown>).map((_, i) =>
      errors.filter((e) => e.schemaPath.startsWith(`${failure.schemaPath}/${i}/`) && e.instancePath.startsWith(failure.instancePath))
    )
    const shaped = branches.filter((branch) => !branch.some((e) => e.keyword === "required" && e.instancePath === failure.instancePath))
    if (shaped.length === 0 || shaped.length === branches.length) continue
    for (const branch of branches) if (!shaped.includes(branch)) branch.forEach((e) => dropped.add(e))
    if (shaped.every((branch) => branch.length > 0)) dropped.add(failure)
  }
  return errors.filter((e) => !dropped.has(e))
}

const problemsOf = (errors: ReadonlyArray<ErrorObject> | null | undefined): ReadonlyArray<string> => {
  const lines = narrowOneOf(errors ?? []).map((error) => `${dotted(error.instancePath) || "body"}: ${wording(error)}`)
  return [...new Set(lines)]
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

/** Problems of a Cloud API send request body against Meta's `Message` schema; empty when valid. */
export const validateCloudMessage = (body: unknown): ReadonlyArray<string> => {
  const { byType } = validators()
  if (!isRecord(body)) return ["body: must be an object"]
  const type = body.type
  // Every member of Message's oneOf pins `type` with an enum, so a body is valid against Message
  // exactly when it is valid against the member its type names: checking that member alone gives
  // the same verdict with errors about the right shape only.
  const validate = typeof type === "string" ? byType.get(type) : undefined
  if (validate === undefined) return [`type: must be one of ${[...byType.keys()].map((t) => JSON.stringify(t)).join(", ")}`]
  return validate(body) ? [] : problemsOf(validate.errors)
}

/** Problems of a message template creation body (POST /{WABA-ID}/message_templates) against Meta's schema; empty when valid. */
export const validateTemplateCreation = (body: unknown): ReadonlyArray<string> => {
  const { templateCreation } = validators()
  return templateCreation(body) ? [] : problemsOf(templateCreation.errors)
}
