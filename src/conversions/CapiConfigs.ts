import { Effect } from "effect"
import { requireOwnerSession } from "../domain/access.ts"
import { describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import { SecretBox } from "../crypto/SecretBox.ts"
import { type CapiConfigRow, CapiConfigsRepo } from "./CapiConfigsRepo.ts"

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

/** An account's configuration as it is shown again: the token only by its last four characters. */
export interface CapiConfig {
  readonly datasetId: string
  readonly tokenLast4: string
  readonly testEventCode: string | null
  readonly updatedAt: Date
}

const configOf = (row: CapiConfigRow): CapiConfig => ({
  datasetId: row.datasetId,
  tokenLast4: row.tokenLast4,
  testEventCode: row.testEventCode,
  updatedAt: row.updatedAt
})

/**
 * An account's Conversions API dataset and access token (PUT/GET /api/v1/app/meta-ads/capi/config,
 * owner only). The token is sealed at rest (SecretBox) and shown again only as its last four.
 */
export class CapiConfigs extends Effect.Service<CapiConfigs>()("herald/conversions/CapiConfigs", {
  effect: Effect.gen(function*() {
    const repo = yield* CapiConfigsRepo
    const box = yield* SecretBox
    const row = repo.find

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
        const saved = yield* repo.save(principal.accountId, {
          datasetId: input.dataset_id,
          accessTokenSealed: box.seal(input.access_token),
          tokenLast4: input.access_token.slice(-4),
          testEventCode: input.test_event_code ?? null
        })
        return configOf(saved)
      })

    const get = (principal: Principal) =>
      Effect.gen(function*() {
        yield* requireOwnerSession(principal, "read the Conversions API configuration")
        const found = yield* row(principal.accountId)
        if (found === undefined) return yield* new NotFound({ message: "the Conversions API is not configured; PUT /api/v1/app/meta-ads/capi/config sets it" })
        return configOf(found)
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
  dependencies: [CapiConfigsRepo.Default, SecretBox.Default]
}) {}
