import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isUniqueViolation } from "../storage/sqlState.ts"

/**
 * The one writer of `email_configuration_sets`. A set's event destinations are rows of `webhooks`
 * (the webhooks repository's table), read and written beside these in ConfigurationSets.
 */
export class ConfigurationSetsRepo extends Effect.Service<ConfigurationSetsRepo>()("herald/email/ConfigurationSetsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The new set's id; undefined when the partner has a set of that name. */
    const insert = Effect.fn("ConfigurationSetsRepo.insert")(function*(partnerId: string, name: string) {
      const rows = yield* sql<{ configSetId: string }>`
          INSERT INTO email_configuration_sets (partner_id, name) VALUES (${partnerId}::uuid, ${name})
          RETURNING config_set_id::text`.pipe(
        Effect.catchIf(isUniqueViolation, () => Effect.succeed([] as ReadonlyArray<{ configSetId: string }>))
      )
      return rows[0]?.configSetId
    }, Effect.orDie)

    /** The id of the partner's set of that name, locked for the transaction around it. */
    const lockByName = Effect.fn("ConfigurationSetsRepo.lockByName")(function*(partnerId: string, name: string) {
      const [set] = yield* sql<{ configSetId: string }>`
          SELECT config_set_id::text FROM email_configuration_sets
          WHERE partner_id = ${partnerId}::uuid AND name = ${name} FOR UPDATE`
      return set
    }, Effect.orDie)

    const idOf = Effect.fn("ConfigurationSetsRepo.idOf")(function*(partnerId: string, name: string) {
      const [row] = yield* sql<{ configSetId: string }>`
        SELECT config_set_id::text FROM email_configuration_sets
        WHERE partner_id = ${partnerId}::uuid AND name = ${name}`
      return row?.configSetId
    }, Effect.orDie)

    const remove = Effect.fn("ConfigurationSetsRepo.remove")(function*(configSetId: string) {
      yield* sql`DELETE FROM email_configuration_sets WHERE config_set_id = ${configSetId}::uuid`
    }, Effect.orDie)

    return { insert, lockByName, idOf, remove } as const
  })
}) {}
