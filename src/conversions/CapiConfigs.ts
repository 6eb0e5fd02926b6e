import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { requireOwnerSession } from "../domain/access.ts"
import { describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import { SecretBox } from "../crypto/SecretBox.ts"

export interface CapiConfigInput {
  readonly dataset_id: string
  readonly access_token: string
  readonly test_event_code?: string | undefined
}

/** What the capi actor needs to forward an account's events. */
export interface CapiTarget {
  readonly datasetId: string
  readonly accessToken: string
  readonly testEventCode: string | null
}

interface ConfigRow {
  readonly datasetId: string
  readonly accessTokenSealed: string
  readonly tokenLast4: string
  readonly testEventCode: string | null
  readonly updatedAt: Date
}

const present = (row: ConfigRow) => ({
  success: true as const,
  dataset_id: row.datasetId,
  access_token: `…${row.tokenLast4}`,
  test_event_code: row.testEventCode,
  updated_at: row.updatedAt.toISOString()
})

/**
 * An account's Conversions API dataset and access token (PUT/GET /api/v1/app/meta-ads/capi/config,
 * owner only). The token is sealed at rest (SecretBox) and shown again only as its last four.
 */
export class CapiConfigs extends Effect.Service<CapiConfigs>()("herald/conversions/CapiConfigs", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox

    const row = (accountId: string) =>
      sql<ConfigRow>`
        SELECT dataset_id, access_token_sealed, token_last4, test_event_code, updated_at
        FROM capi_configs WHERE account_id = ${accountId}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    const put = (principal: Principal, input: CapiConfigInput) =>
      Effect.gen(function*() {
        yield* requireOwnerSession(principal, "configure the Conversions API")
        const issues: Array<FieldIssue> = []
        if (!/^\d{1,32}$/.test(input.dataset_id)) issues.push(new FieldIssue({ path: "dataset_id", message: "must be the dataset's (pixel's) id: digits" }))
        if (input.access_token.length < 8 || input.access_token.length > 1024 || /\s/.test(input.access_token)) {
          issues.push(new FieldIssue({ path: "access_token", message: "must be the dataset's access token (8 to 1024 characters, no spaces)" }))
        }
        if (input.test_event_code !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(input.test_event_code)) {
          issues.push(new FieldIssue({ path: "test_event_code", message: "must be Events Manager's test code (letters and digits)" }))
        }
        if (issues.length > 0) return yield* new InvalidRequest({ message: describeIssues(issues), errors: issues })
        const [saved] = yield* sql<ConfigRow>`
          INSERT INTO capi_configs (account_id, dataset_id, access_token_sealed, token_last4, test_event_code)
          VALUES (${principal.accountId}, ${input.dataset_id}, ${box.seal(input.access_token)}, ${input.access_token.slice(-4)}, ${input.test_event_code ?? null})
          ON CONFLICT (account_id) DO UPDATE SET dataset_id = excluded.dataset_id, access_token_sealed = excluded.access_token_sealed,
            token_last4 = excluded.token_last4, test_event_code = excluded.test_event_code, updated_at = now()
          RETURNING dataset_id, access_token_sealed, token_last4, test_event_code, updated_at`.pipe(Effect.orDie)
        return present(saved!)
      })

    const get = (principal: Principal) =>
      Effect.gen(function*() {
        yield* requireOwnerSession(principal, "read the Conversions API configuration")
        const found = yield* row(principal.accountId)
        if (found === undefined) return yield* new NotFound({ message: "the Conversions API is not configured; PUT /api/v1/app/meta-ads/capi/config sets it" })
        return present(found)
      })

    /** The account's target with its token opened; undefined when none is set or it cannot be opened (another HERALD_SECRETS_KEY). */
    const target = (accountId: string) =>
      Effect.map(row(accountId), (found): CapiTarget | undefined => {
        if (found === undefined) return undefined
        const accessToken = box.open(found.accessTokenSealed)
        return accessToken === undefined ? undefined : { datasetId: found.datasetId, accessToken, testEventCode: found.testEventCode }
      })

    return { put, get, target } as const
  }),
  dependencies: [SecretBox.Default]
}) {}
