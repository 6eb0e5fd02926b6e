import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { Conflict, describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { SecretBox } from "../crypto/SecretBox.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"
import { isUniqueViolation } from "../storage/sqlState.ts"
import { urlProblem } from "../webhooks/urlPolicy.ts"
import { newSecret } from "../webhooks/Webhooks.ts"
import { CursorPages } from "./cursorPage.ts"
import { EVENT_TYPES, type EventType, webhookTypeOf } from "./model.ts"

/** A set's name (the contract's SetName): 1 to 64 letters, digits, `_` and `-`. */
export const SET_NAME = /^[A-Za-z0-9_-]{1,64}$/
export const MAX_DESTINATIONS = 10

export interface DestinationInput {
  readonly destination_id?: string | undefined
  readonly url: string
  readonly events: ReadonlyArray<string>
}

interface PageQuery {
  readonly limit?: number | undefined
  readonly next_cursor?: string | undefined
}

interface DestinationJson {
  readonly destination_id: string
  readonly url: string
  readonly events: ReadonlyArray<string>
}

interface SetRow {
  readonly configSetId: string
  readonly name: string
  readonly createdAt: Date
  /** created_at to the microsecond, as a cursor carries it. */
  readonly position: string
  /** Live destinations, oldest first (json: keys as written). */
  readonly destinations: ReadonlyArray<DestinationJson>
}

/** The API's event type of a stored webhook type (`email.delivery` → DELIVERY). */
const apiTypeOf = (stored: string): EventType | undefined => {
  const type = stored.startsWith("email.") ? stored.slice("email.".length).toUpperCase() : ""
  return (EVENT_TYPES as ReadonlyArray<string>).includes(type) ? (type as EventType) : undefined
}

const presentDestination = (row: DestinationJson, secrets: ReadonlyMap<string, string>) => {
  const secret = secrets.get(row.destination_id)
  return {
    destination_id: row.destination_id,
    url: row.url,
    events: row.events.flatMap((stored) => apiTypeOf(stored) ?? []),
    ...(secret === undefined ? {} : { secret })
  }
}

const presentSet = (row: SetRow, secrets: ReadonlyMap<string, string> = new Map()) => ({
  name: row.name,
  event_destinations: row.destinations.map((d) => presentDestination(d, secrets)),
  created_at: new Date(row.createdAt).toISOString()
})

const notFound = (name: string) => new NotFound({ message: `no configuration set named ${name}` })

const invalid = (issues: ReadonlyArray<FieldIssue>) => new InvalidRequest({ message: describeIssues(issues), errors: issues })

/**
 * Configuration sets (SES v2's): a name a send may carry (`configuration_set`) and the event
 * destinations its mail's events are POSTed to. A destination is a row of `webhooks` of channel
 * `email` (account_id = the partner, config_set_id = the set), so Herald's delivery machinery
 * (Standard Webhooks signing, retries, attempts, dead letters) carries the events; its `events`
 * hold the webhook types (`email.delivery`, …). Removed destinations are soft-deleted like any
 * endpoint, so their delivery log stays readable.
 */
export class ConfigurationSets extends Effect.Service<ConfigurationSets>()("herald/email/ConfigurationSets", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const feed = yield* ChangeFeed
    const pages = yield* CursorPages
    const box = yield* SecretBox

    const SET_COLUMNS = sql.literal(`
      s.config_set_id, s.name, s.created_at, ${positionOf("s.created_at")} AS position,
      COALESCE((
        SELECT json_agg(json_build_object('destination_id', w.webhook_id, 'url', w.url, 'events', w.events) ORDER BY w.created_at, w.webhook_id)
        FROM webhooks w WHERE w.config_set_id = s.config_set_id AND w.channel = 'email' AND w.deleted_at IS NULL
      ), '[]'::json) AS destinations`)

    /** Problems of a set's destinations, named by their path in the request. */
    const destinationIssues = (destinations: ReadonlyArray<DestinationInput>) => {
      const issues: Array<FieldIssue> = []
      if (destinations.length > MAX_DESTINATIONS) {
        issues.push(new FieldIssue({ path: "event_destinations", message: `a configuration set has at most ${MAX_DESTINATIONS} destinations` }))
      }
      const ids = new Set<string>()
      destinations.forEach((d, i) => {
        const at = `event_destinations[${i}]`
        const problem = urlProblem(d.url, config.webhookAllowPrivate)
        if (problem !== undefined) issues.push(new FieldIssue({ path: `${at}.url`, message: problem }))
        if (d.events.length === 0) issues.push(new FieldIssue({ path: `${at}.events`, message: "needs at least one event type" }))
        const unknown = d.events.find((type) => !(EVENT_TYPES as ReadonlyArray<string>).includes(type))
        if (unknown !== undefined) issues.push(new FieldIssue({ path: `${at}.events`, message: `${unknown} is not one of ${EVENT_TYPES.join(", ")}` }))
        if (d.destination_id !== undefined) {
          const id = d.destination_id.toLowerCase()
          if (ids.has(id)) issues.push(new FieldIssue({ path: `${at}.destination_id`, message: "names a destination already listed" }))
          ids.add(id)
        }
      })
      return issues
    }

    const storedEvents = (events: ReadonlyArray<string>) => [...new Set(events)].map((type) => webhookTypeOf(type as EventType))

    /** A new destination of the set; answers its id and secret (shown this once). */
    const insertDestination = (partnerId: string, configSetId: string, d: DestinationInput) =>
      Effect.gen(function*() {
        const secret = newSecret()
        // clock_timestamp: destinations created in one request keep the order they were given in.
        const [row] = yield* sql<{ webhookId: string }>`
          INSERT INTO webhooks (account_id, url, events, bot_id, secret, channel, config_set_id, created_at)
          VALUES (${partnerId}::uuid, ${d.url}, ${storedEvents(d.events)}::text[], NULL, ${box.seal(secret)}, 'email', ${configSetId}::uuid, clock_timestamp())
          RETURNING webhook_id::text`
        return [row!.webhookId, secret] as const
      })

    const findRow = (partnerId: string, name: string) =>
      sql<SetRow>`
        SELECT ${SET_COLUMNS} FROM email_configuration_sets s
        WHERE s.partner_id = ${partnerId}::uuid AND s.name = ${name}`.pipe(Effect.map((rows) => rows[0]))

    /** Tells this node's endpoint caches at once (the change feed tells the other nodes). */
    const changed = (partnerId: string) => feed.committed("webhooks", partnerId)

    const create = Effect.fn("ConfigurationSets.create")(function*(
      partnerId: string,
      input: { readonly name: string; readonly event_destinations?: ReadonlyArray<DestinationInput> | undefined }
    ) {
      const destinations = input.event_destinations ?? []
      const issues = [
        ...(SET_NAME.test(input.name) ? [] : [new FieldIssue({ path: "name", message: "must be 1 to 64 letters, digits, _ and -" })]),
        ...destinationIssues(destinations)
      ]
      const given = destinations.findIndex((d) => d.destination_id !== undefined)
      if (given >= 0) issues.push(new FieldIssue({ path: `event_destinations[${given}].destination_id`, message: "a new configuration set has no destinations to keep" }))
      if (issues.length > 0) return yield* invalid(issues)

      const { row, secrets } = yield* sql.withTransaction(Effect.gen(function*() {
        const [created] = yield* sql<{ configSetId: string }>`
          INSERT INTO email_configuration_sets (partner_id, name) VALUES (${partnerId}::uuid, ${input.name})
          RETURNING config_set_id::text`.pipe(
          Effect.catchTag("SqlError", (error) =>
            isUniqueViolation(error)
              ? new Conflict({ key: "name", message: `a configuration set named ${input.name} exists` })
              : Effect.die(error))
        )
        const secrets = new Map<string, string>()
        for (const d of destinations) {
          const [id, secret] = yield* insertDestination(partnerId, created!.configSetId, d)
          secrets.set(id, secret)
        }
        return { row: (yield* findRow(partnerId, input.name))!, secrets }
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      if (destinations.length > 0) yield* changed(partnerId)
      return { success: true as const, ...presentSet(row, secrets) }
    })

    const list = Effect.fn("ConfigurationSets.list")(function*(partnerId: string, query: PageQuery) {
      const { rows, ...page } = yield* pages.page(
        { list: "configuration_sets", partnerId },
        query,
        (after: PagePosition | undefined, take: number) =>
          sql<SetRow>`
            SELECT ${SET_COLUMNS} FROM email_configuration_sets s
            WHERE ${
            sql.and([
              sql`s.partner_id = ${partnerId}::uuid`,
              ...(after === undefined ? [] : [sql`(s.created_at, s.config_set_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`])
            ])
          }
            ORDER BY s.created_at DESC, s.config_set_id DESC
            LIMIT ${take}`.pipe(Effect.orDie),
        (row) => ({ createdAt: row.position, id: row.configSetId })
      )
      return { success: true as const, configuration_sets: rows.map((row) => presentSet(row)), ...page }
    })

    const get = Effect.fn("ConfigurationSets.get")(function*(partnerId: string, name: string) {
      const row = SET_NAME.test(name) ? yield* findRow(partnerId, name).pipe(Effect.orDie) : undefined
      if (row === undefined) return yield* notFound(name)
      return { success: true as const, ...presentSet(row) }
    })

    /**
     * Replaces the set's destinations: one given with its destination_id is kept (URL and events
     * as given now), one without is created (its secret answered this once), one left out is
     * soft-deleted. The set's row is locked meanwhile, so concurrent replacements apply in turn.
     */
    const update = Effect.fn("ConfigurationSets.update")(function*(
      partnerId: string,
      name: string,
      input: { readonly event_destinations: ReadonlyArray<DestinationInput> }
    ) {
      if (!SET_NAME.test(name)) return yield* notFound(name)
      const destinations = input.event_destinations
      const issues = destinationIssues(destinations)
      if (issues.length > 0) return yield* invalid(issues)

      const { row, secrets } = yield* sql.withTransaction(Effect.gen(function*() {
        const [set] = yield* sql<{ configSetId: string }>`
          SELECT config_set_id::text FROM email_configuration_sets
          WHERE partner_id = ${partnerId}::uuid AND name = ${name} FOR UPDATE`
        if (set === undefined) return yield* notFound(name)
        const live = new Set((yield* sql<{ webhookId: string }>`
          SELECT webhook_id::text FROM webhooks
          WHERE config_set_id = ${set.configSetId}::uuid AND channel = 'email' AND deleted_at IS NULL`).map((r) => r.webhookId.toLowerCase()))
        const unknown = destinations.flatMap((d, i) =>
          d.destination_id !== undefined && !(isUuid(d.destination_id) && live.has(d.destination_id.toLowerCase()))
            ? [new FieldIssue({ path: `event_destinations[${i}].destination_id`, message: `${d.destination_id} is not a destination of this configuration set` })]
            : []
        )
        if (unknown.length > 0) return yield* invalid(unknown)

        const kept = destinations.flatMap((d) => (d.destination_id === undefined ? [] : [d.destination_id.toLowerCase()]))
        yield* sql`
          UPDATE webhooks SET deleted_at = now(), active = false, updated_at = now()
          WHERE config_set_id = ${set.configSetId}::uuid AND channel = 'email' AND deleted_at IS NULL
            AND NOT (webhook_id = ANY(${kept}::uuid[]))`
        const secrets = new Map<string, string>()
        for (const d of destinations) {
          if (d.destination_id !== undefined) {
            yield* sql`
              UPDATE webhooks SET url = ${d.url}, events = ${storedEvents(d.events)}::text[], updated_at = now()
              WHERE webhook_id = ${d.destination_id}::uuid AND config_set_id = ${set.configSetId}::uuid`
          } else {
            const [id, secret] = yield* insertDestination(partnerId, set.configSetId, d)
            secrets.set(id, secret)
          }
        }
        return { row: (yield* findRow(partnerId, name))!, secrets }
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      yield* changed(partnerId)
      return { success: true as const, ...presentSet(row, secrets) }
    })

    /** Deletes the set; its destinations are soft-deleted first, in the same transaction. */
    const remove = Effect.fn("ConfigurationSets.remove")(function*(partnerId: string, name: string) {
      if (!SET_NAME.test(name)) return yield* notFound(name)
      const removed = yield* sql.withTransaction(Effect.gen(function*() {
        const [set] = yield* sql<{ configSetId: string }>`
          SELECT config_set_id::text FROM email_configuration_sets
          WHERE partner_id = ${partnerId}::uuid AND name = ${name} FOR UPDATE`
        if (set === undefined) return false
        yield* sql`
          UPDATE webhooks SET deleted_at = now(), active = false, updated_at = now()
          WHERE config_set_id = ${set.configSetId}::uuid AND channel = 'email' AND deleted_at IS NULL`
        yield* sql`DELETE FROM email_configuration_sets WHERE config_set_id = ${set.configSetId}::uuid`
        return true
      })).pipe(Effect.orDie)
      if (!removed) return yield* notFound(name)
      yield* changed(partnerId)
      return { success: true as const }
    })

    /** The id of the partner's set of that name, for a send that names it; undefined when there is none. */
    const idOf = Effect.fn("ConfigurationSets.idOf")(function*(partnerId: string, name: string) {
      if (!SET_NAME.test(name)) return undefined
      const [row] = yield* sql<{ configSetId: string }>`
        SELECT config_set_id::text FROM email_configuration_sets
        WHERE partner_id = ${partnerId}::uuid AND name = ${name}`.pipe(Effect.orDie)
      return row?.configSetId
    })

    return { create, list, get, update, remove, idOf } as const
  }),
  dependencies: [CursorPages.Default, ChangeFeed.Default, SecretBox.Default]
}) {}
