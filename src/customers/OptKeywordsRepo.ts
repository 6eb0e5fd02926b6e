import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { OptKeywords } from "./optOut.ts"

/** `opt_keywords`: an account's own opt-out and opt-in keywords, the table's one writer. */
export class OptKeywordsRepo extends Effect.Service<OptKeywordsRepo>()("herald/customers/OptKeywordsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The account's own lists; undefined when it keeps the defaults. */
    const find = Effect.fn("OptKeywordsRepo.find")(function*(accountId: string) {
      const [row] = yield* sql<{ optOut: Array<string>; optIn: Array<string>; updatedAt: Date }>`
        SELECT opt_out, opt_in, updated_at FROM opt_keywords WHERE account_id = ${accountId}`.pipe(Effect.orDie)
      return row
    })

    /** Sets the account's lists, replacing what it had. */
    const save = Effect.fn("OptKeywordsRepo.save")(function*(accountId: string, keywords: OptKeywords) {
      const [row] = yield* sql<{ updatedAt: Date }>`
        INSERT INTO opt_keywords (account_id, opt_out, opt_in)
        VALUES (${accountId}, ${[...keywords.optOut]}::text[], ${[...keywords.optIn]}::text[])
        ON CONFLICT (account_id) DO UPDATE SET opt_out = excluded.opt_out, opt_in = excluded.opt_in, updated_at = now()
        RETURNING updated_at`.pipe(Effect.orDie)
      return row!.updatedAt
    })

    /** Back to the defaults. */
    const remove = Effect.fn("OptKeywordsRepo.remove")(function*(accountId: string) {
      yield* sql`DELETE FROM opt_keywords WHERE account_id = ${accountId}`.pipe(Effect.orDie)
    })

    return { find, save, remove } as const
  })
}) {}
