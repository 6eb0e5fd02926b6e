import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isUuid } from "../domain/ids.ts"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"
import { customerCondition } from "./filterSql.ts"
import type { CustomerQuery } from "./traitFilters.ts"
import type { Traits } from "./traits.ts"
import { OPTED_OUT_AT_TRAIT, OPTED_OUT_TRAIT } from "./optOut.ts"

export interface CustomerRow {
  readonly customerId: string
  readonly phone: string
  readonly name: string | null
  readonly userId: string | null
  readonly traits: Traits
  readonly tags: ReadonlyArray<string>
  readonly createdAt: Date
  readonly lastSeenAt: Date | null
  readonly position: string
}

/** A customer import's batch, column by column as the upsert's unnest takes it (traits and tags as JSON text). */
export interface CustomerBatch {
  readonly phones: ReadonlyArray<string>
  readonly names: ReadonlyArray<string | null>
  readonly userIds: ReadonlyArray<string | null>
  readonly traits: ReadonlyArray<string | null>
  readonly tags: ReadonlyArray<string | null>
}

/** Customers a search's first try walks (see `search`). */
const SCAN_WINDOW = 20_000

const COLUMNS = `c.customer_id::text, c.phone, c.name, c.user_id, c.traits, c.tags, c.created_at, c.last_seen_at, ${positionOf("c.created_at")} AS position`

/** An account's customers: one row per phone (E.164), written by track/users and by WhatsApp itself. */
export class CustomersRepo extends Effect.Service<CustomersRepo>()("herald/customers/CustomersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)

    const find = (accountId: string, customerId: string) =>
      isUuid(customerId)
        ? sql<CustomerRow>`SELECT ${columns} FROM customers c WHERE c.account_id = ${accountId} AND c.customer_id = ${customerId}`.pipe(
          Effect.map((rows) => rows[0]),
          Effect.orDie
        )
        : Effect.succeed(undefined)

    /**
     * Upserts a customer by phone with `merge` deciding its traits and tags from the current ones
     * (none for a new customer), under the row's lock so concurrent calls each see the other's
     * changes. `merge` may refuse (its Left), and then nothing is written. Answers the customer's
     * id and whether this call created it.
     */
    const upsert = <E>(
      input: { readonly accountId: string; readonly phone: string; readonly name: string | undefined; readonly userId: string | undefined },
      merge: (current: { readonly traits: Traits; readonly tags: ReadonlyArray<string> }) => Effect.Effect<{ readonly traits: Traits; readonly tags: ReadonlyArray<string> }, E>
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        // Creates the row if absent (the insert is a no-op on conflict), then locks it.
        const inserted = yield* sql`INSERT INTO customers (account_id, phone) VALUES (${input.accountId}, ${input.phone}) ON CONFLICT (account_id, phone) DO NOTHING RETURNING 1`
        const [current] = yield* sql<{ customerId: string; traits: Traits; tags: ReadonlyArray<string> }>`
          SELECT customer_id::text, traits, tags FROM customers WHERE account_id = ${input.accountId} AND phone = ${input.phone} FOR UPDATE`
        const next = yield* merge(current!)
        yield* sql`
          UPDATE customers SET traits = ${JSON.stringify(next.traits)}::jsonb, tags = ${next.tags}::text[],
            name = coalesce(${input.name ?? null}, name), user_id = coalesce(${input.userId ?? null}, user_id)
          WHERE customer_id = ${current!.customerId}`
        return { customerId: current!.customerId, created: inserted.length > 0 }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * One page of the customers `query` matches, newest first, after `after`. Two tries: the
     * newest SCAN_WINDOW customers past the cursor, walked in page order and filtered (bounded
     * work, and enough whenever the filters match more than one customer in a few hundred, which
     * Postgres's estimates for jsonb conditions cannot tell); only if those hold less than a page,
     * the whole query as the planner sees fit (the GIN indexes serve a selective filter). The
     * first try's rows are the first rows of the second's, so a page is the same either way.
     */
    const search = (input: { readonly accountId: string; readonly query: CustomerQuery; readonly after: PagePosition | undefined; readonly limit: number }) =>
      Effect.gen(function*() {
        const condition = customerCondition(sql, input.query)
        const position = input.after === undefined
          ? sql``
          : sql`AND (c.created_at, c.customer_id) < (${input.after.createdAt}::timestamptz, ${input.after.id}::uuid)`
        const order = sql`ORDER BY c.created_at DESC, c.customer_id DESC`
        const window = yield* sql<CustomerRow>`
          SELECT ${columns} FROM (
            SELECT * FROM customers c WHERE c.account_id = ${input.accountId} ${position} ${order} LIMIT ${SCAN_WINDOW}
          ) c
          WHERE ${condition} ${order} LIMIT ${input.limit + 1}`
        if (window.length > input.limit) return window
        return yield* sql<CustomerRow>`
          SELECT ${columns} FROM customers c
          WHERE c.account_id = ${input.accountId} AND ${condition} ${position}
          ${order} LIMIT ${input.limit + 1}`
      }).pipe(Effect.orDie)

    /** The customer with a phone (E.164). */
    const findByPhone = (accountId: string, phone: string) =>
      sql<CustomerRow>`SELECT ${columns} FROM customers c WHERE c.account_id = ${accountId} AND c.phone = ${phone}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    /** Customers of the account among `ids` (GraphQL's contact loader). */
    const findMany = (accountId: string, ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<CustomerRow>)
        : sql<CustomerRow>`SELECT ${columns} FROM customers c WHERE c.account_id = ${accountId} AND c.customer_id = ANY(${ids}::uuid[])`.pipe(Effect.orDie)

    /**
     * Changes one customer of the account under its row's lock (as `upsert`): name and user id set
     * when given (null clears them), traits and tags as `merge` decides from the current ones.
     * Undefined when the account has no such customer.
     */
    const update = <E>(
      input: { readonly accountId: string; readonly customerId: string; readonly name: string | null | undefined; readonly userId: string | null | undefined },
      merge: (current: { readonly traits: Traits; readonly tags: ReadonlyArray<string> }) => Effect.Effect<{ readonly traits: Traits; readonly tags: ReadonlyArray<string> }, E>
    ) =>
      isUuid(input.customerId)
        ? sql.withTransaction(Effect.gen(function*() {
          const [current] = yield* sql<{ traits: Traits; tags: ReadonlyArray<string> }>`
            SELECT traits, tags FROM customers WHERE account_id = ${input.accountId} AND customer_id = ${input.customerId} FOR UPDATE`
          if (current === undefined) return undefined
          const next = yield* merge(current)
          yield* sql`
            UPDATE customers SET traits = ${JSON.stringify(next.traits)}::jsonb, tags = ${next.tags}::text[],
              name = CASE WHEN ${input.name !== undefined} THEN ${input.name ?? null} ELSE name END,
              user_id = CASE WHEN ${input.userId !== undefined} THEN ${input.userId ?? null} ELSE user_id END
            WHERE customer_id = ${input.customerId}`
          return input.customerId
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        : Effect.succeed(undefined)

    /** Deletes a customer of the account (their conversations and inbound messages with it); false when there is none. */
    const remove = (accountId: string, customerId: string) =>
      isUuid(customerId)
        ? sql`DELETE FROM customers WHERE account_id = ${accountId} AND customer_id = ${customerId} RETURNING 1`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
        : Effect.succeed(false)

    /** How many customers of the account `query` matches (a segment's live count). */
    const count = (accountId: string, query: CustomerQuery) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM customers c WHERE c.account_id = ${accountId} AND ${customerCondition(sql, query)}`.pipe(
        Effect.map((rows) => rows[0]?.n ?? 0),
        Effect.orDie
      )

    /**
     * A customer import's batch (one row per phone), upserted like POST /app/contacts: names and
     * user ids set when given, traits merged (a null one removed), tags added. Counts rows new to
     * the account, rows that changed a customer from before the import, and rows repeating a phone
     * this import already wrote (its transaction is the row's last writer: xmin is its id).
     */
    const upsertBatch = (accountId: string, batch: CustomerBatch) =>
      sql<{ added: number; updated: number; duplicates: number }>`
        WITH t AS (
          SELECT * FROM unnest(${batch.phones}::text[], ${batch.names}::text[], ${batch.userIds}::text[], ${batch.traits}::jsonb[], ${batch.tags}::jsonb[])
            AS t(phone, name, user_id, traits, tags)
        ), prior AS (
          SELECT c.phone, c.xmin = pg_current_xact_id()::xid AS ours
          FROM customers c WHERE c.account_id = ${accountId} AND c.phone = ANY(${batch.phones}::text[])
        ), up AS (
          INSERT INTO customers AS c (account_id, phone, name, user_id, traits, tags)
          -- A new customer's traits without the nulls; a known one's as sent, so that the update
          -- below reads the nulls (a null removes the trait) in excluded.traits.
          SELECT ${accountId}::uuid, t.phone, t.name, t.user_id,
                 CASE WHEN p.phone IS NULL THEN jsonb_strip_nulls(coalesce(t.traits, '{}')) ELSE coalesce(t.traits, '{}') END,
                 ARRAY(SELECT jsonb_array_elements_text(coalesce(t.tags, '[]')))
          FROM t LEFT JOIN prior p ON p.phone = t.phone
          ON CONFLICT (account_id, phone) DO UPDATE SET
            name = coalesce(excluded.name, c.name),
            user_id = coalesce(excluded.user_id, c.user_id),
            traits = jsonb_strip_nulls(c.traits || excluded.traits),
            tags = c.tags || ARRAY(SELECT x FROM unnest(excluded.tags) x WHERE NOT x = ANY(c.tags))
          RETURNING c.phone
        )
        SELECT count(*) FILTER (WHERE p.phone IS NULL)::int AS added,
               count(*) FILTER (WHERE p.phone IS NOT NULL AND NOT p.ours)::int AS updated,
               count(*) FILTER (WHERE p.ours)::int AS duplicates
        FROM up LEFT JOIN prior p ON p.phone = up.phone`.pipe(
        Effect.map((rows) => rows[0] ?? { added: 0, updated: 0, duplicates: 0 }),
        Effect.orDie
      )

    /** Tags taken off a customer; false when the account has no such customer. */
    const removeTags = (accountId: string, customerId: string, tags: ReadonlyArray<string>) =>
      isUuid(customerId)
        ? sql`
          UPDATE customers SET tags = ARRAY(SELECT t FROM unnest(tags) WITH ORDINALITY AS x(t, n) WHERE NOT t = ANY(${tags}::text[]) ORDER BY n)
          WHERE account_id = ${accountId} AND customer_id = ${customerId} RETURNING 1`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
        : Effect.succeed(false)

    /**
     * A customer seen on WhatsApp (an inbound message, a call, a payment): created on first contact,
     * else their name filled in when given and last_seen_at moved forward (never back: Meta
     * reorders its webhooks). Answers the customer's id. Runs on the ambient connection, so inside
     * the caller's transaction when it has one (whatsapp/inbound/WaReports.ts records the inbound
     * message and its conversation in the same one).
     */
    const recordSeen = Effect.fn("CustomersRepo.recordSeen")(function*(input: {
      readonly accountId: string
      readonly phone: string
      readonly name: string | undefined
      readonly seenAt: Date
    }) {
      const [customer] = yield* sql<{ customerId: string }>`
        INSERT INTO customers (account_id, phone, name, last_seen_at)
        VALUES (${input.accountId}::uuid, ${input.phone}, ${input.name ?? null}, ${input.seenAt.toISOString()}::timestamptz)
        ON CONFLICT (account_id, phone) DO UPDATE SET
          name = coalesce(excluded.name, customers.name),
          last_seen_at = greatest(customers.last_seen_at, excluded.last_seen_at)
        RETURNING customer_id::text`
      return customer!.customerId
    })

    /**
     * Marks the customer opted out of marketing (or back in) by their own message, in the caller's
     * transaction (the inbound message's). True when the state changed: a second STOP changes
     * nothing and emits nothing.
     */
    const setOptedOut = Effect.fn("CustomersRepo.setOptedOut")(function*(input: {
      readonly accountId: string
      readonly customerId: string
      readonly optedOut: boolean
      readonly at: Date
    }) {
      const changed = yield* sql`
        UPDATE customers SET traits = traits || jsonb_build_object(${OPTED_OUT_TRAIT}::text, ${input.optedOut}::boolean, ${OPTED_OUT_AT_TRAIT}::text, ${input.at.toISOString()}::text)
        WHERE account_id = ${input.accountId}::uuid AND customer_id = ${input.customerId}::uuid
          AND coalesce(traits -> ${OPTED_OUT_TRAIT} = 'true'::jsonb, false) <> ${input.optedOut}::boolean
        RETURNING 1`
      return changed.length > 0
    })

    /** The phones of the account's customers among `ids`, by id (an id of no customer of the account is absent). */
    const phonesOf = (accountId: string, ids: ReadonlyArray<string>) => {
      const known = ids.filter(isUuid)
      return known.length === 0
        ? Effect.succeed(new Map<string, string>())
        : sql<{ customerId: string; phone: string }>`
          SELECT customer_id::text, phone FROM customers WHERE account_id = ${accountId} AND customer_id = ANY(${known}::uuid[])`.pipe(
          Effect.map((rows) => new Map(rows.map((row) => [row.customerId, row.phone]))),
          Effect.orDie
        )
    }

    /** Runs `effect` in one transaction (a customer import: a body cut short leaves nothing written). */
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))

    return { find, findByPhone, findMany, upsert, upsertBatch, update, remove, count, search, removeTags, recordSeen, setOptedOut, phonesOf, transaction } as const
  })
}) {}
