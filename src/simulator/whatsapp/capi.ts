import { type Answer, answer } from "../httpHelpers.ts"
import { fbtraceId } from "./metaErrors.ts"

/**
 * Meta's Conversions API as far as Herald's `capi` actor needs it checked: the batch limit, the
 * 7-day event_time window, a known action_source, and user data hashed as Meta's SDK hashes it.
 * One invalid event rejects the whole batch, as Meta does.
 */

const MAX_EVENTS = 1_000
const SEVEN_DAYS_SEC = 7 * 86_400
/** Clocks differ a little; Meta refuses events from the future beyond that. */
const FUTURE_SKEW_SEC = 60

const ACTION_SOURCES = new Set([
  "email",
  "website",
  "app",
  "phone_call",
  "chat",
  "physical_store",
  "system_generated",
  "business_messaging",
  "other"
])

/** user_data fields Meta requires SHA-256 hashed (external_id is recommended, not required). */
const HASHED_FIELDS = ["em", "ph", "fn", "ln", "ge", "db", "ct", "st", "zp", "country"] as const

const SHA256_HEX = /^[0-9a-f]{64}$/

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value)

const hashProblems = (path: string, value: unknown): Array<string> => {
  const values = Array.isArray(value) ? value : [value]
  return values.every((v) => typeof v === "string" && SHA256_HEX.test(v)) ? [] : [`${path} must be SHA-256 hashes (64 lowercase hex characters)`]
}

const userDataProblems = (path: string, userData: unknown): Array<string> => {
  if (!isRecord(userData)) return [`${path} is required and must be an object`]
  return HASHED_FIELDS.flatMap((field) => (userData[field] === undefined ? [] : hashProblems(`${path}.${field}`, userData[field])))
}

const eventTimeProblems = (path: string, eventTime: unknown, nowSec: number): Array<string> => {
  if (typeof eventTime !== "number" || !Number.isInteger(eventTime)) return [`${path} must be a unix time in seconds`]
  if (eventTime < nowSec - SEVEN_DAYS_SEC) return [`${path} is more than 7 days in the past`]
  if (eventTime > nowSec + FUTURE_SKEW_SEC) return [`${path} is in the future`]
  return []
}

const eventProblems = (event: unknown, index: number, nowSec: number): Array<string> => {
  const path = `data[${index}]`
  if (!isRecord(event)) return [`${path} must be an object`]
  return [
    ...(typeof event.event_name === "string" && event.event_name !== "" ? [] : [`${path}.event_name is required`]),
    ...eventTimeProblems(`${path}.event_time`, event.event_time, nowSec),
    ...(typeof event.action_source === "string" && ACTION_SOURCES.has(event.action_source) ? [] : [`${path}.action_source must be one of ${[...ACTION_SOURCES].join(", ")}`]),
    ...userDataProblems(`${path}.user_data`, event.user_data)
  ]
}

/** What is wrong with an events request body (already parsed); empty when Meta would take it. */
export const capiProblems = (body: Record<string, unknown> | undefined, nowSec: number): ReadonlyArray<string> => {
  if (body === undefined) return ["the body must be a JSON object"]
  const data = body.data
  if (!Array.isArray(data) || data.length === 0) return ["data must be a non-empty array of events"]
  if (data.length > MAX_EVENTS) return [`data holds ${data.length} events; at most ${MAX_EVENTS} a request`]
  return data.flatMap((event, index) => eventProblems(event, index, nowSec))
}

export const capiAnswer = (body: Record<string, unknown> | undefined, nowSec: number): Answer => {
  const problems = capiProblems(body, nowSec)
  if (problems.length > 0) {
    return answer(400, {
      error: {
        message: "Invalid parameter",
        type: "OAuthException",
        code: 100,
        error_user_title: "Invalid events",
        error_user_msg: problems.join("; "),
        error_data: { details: problems },
        fbtrace_id: fbtraceId()
      }
    })
  }
  return answer(200, { events_received: (body!.data as Array<unknown>).length, messages: [], fbtrace_id: fbtraceId() })
}

export interface CapiRequest {
  readonly path: string
  /** The parsed body, or the raw text when it was not JSON. */
  readonly body: unknown
  readonly received_at: string
  /** What the simulator answered: Herald's tests see rejected requests too. */
  readonly status: number
}

/** The last requests per dataset; older ones drop off so a long run stays bounded. */
export class CapiLog {
  private readonly byDataset = new Map<string, Array<CapiRequest>>()
  total = 0

  constructor(private readonly keep = 1_000) {}

  record(datasetId: string, request: CapiRequest): void {
    let requests = this.byDataset.get(datasetId)
    if (requests === undefined) this.byDataset.set(datasetId, (requests = []))
    requests.push(request)
    if (requests.length > this.keep) requests.splice(0, requests.length - this.keep)
    this.total++
  }

  requestsOf(datasetId: string): ReadonlyArray<CapiRequest> {
    return this.byDataset.get(datasetId) ?? []
  }
}
