import { Effect, Stream } from "effect"
import { UnsupportedMediaType } from "../contacts/errors.ts"
import { importFormatOf, Imports, type Upload } from "../contacts/Imports.ts"
import { ImportTally, type ValidContact } from "../contacts/importTally.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { CUSTOMER_ROWS } from "./customerRows.ts"
import { type CustomerBatch, CustomersRepo } from "./CustomersRepo.ts"

/**
 * A batch with one row per phone: a phone repeated inside it is folded into its first row (later
 * names and user ids win, traits merge, tags add up), as writing the rows one after another would
 * leave it. Each fold is one of the report's duplicates.
 */
export const foldRepeats = (rows: ReadonlyArray<ValidContact>): { readonly batch: CustomerBatch; readonly repeats: number } => {
  const byPhone = new Map<string, { name: string | null; userId: string | null; traits: Record<string, unknown> | null; tags: Array<string> | null; raw: ValidContact }>()
  let repeats = 0
  for (const row of rows) {
    const seen = byPhone.get(row.phone)
    if (seen === undefined) {
      byPhone.set(row.phone, { name: row.name, userId: row.userId, traits: null, tags: null, raw: row })
      continue
    }
    repeats++
    seen.name = row.name ?? seen.name
    seen.userId = row.userId ?? seen.userId
    if (row.params !== null) seen.traits = { ...(seen.traits ?? JSON.parse(seen.raw.params ?? "{}")), ...JSON.parse(row.params) }
    if (row.tags !== null) {
      const tags = seen.tags ?? (JSON.parse(seen.raw.tags ?? "[]") as Array<string>)
      for (const tag of JSON.parse(row.tags) as Array<string>) if (!tags.includes(tag)) tags.push(tag)
      seen.tags = tags
    }
  }
  const batch = { phones: [] as Array<string>, names: [] as Array<string | null>, userIds: [] as Array<string | null>, traits: [] as Array<string | null>, tags: [] as Array<string | null> }
  for (const [phone, row] of byPhone) {
    batch.phones.push(phone)
    batch.names.push(row.name)
    batch.userIds.push(row.userId)
    batch.traits.push(row.traits === null ? row.raw.params : JSON.stringify(row.traits))
    batch.tags.push(row.tags === null ? row.raw.tags : JSON.stringify(row.tags))
  }
  return { batch, repeats }
}

/**
 * POST /api/v1/app/contacts/import (docs/app-api.md): CSV (phone, name, every other column a
 * trait, typed by src/customers/csvTraits.ts) or NDJSON (POST /app/contacts's bodies) streamed into the account's customers through the
 * contact lists' importer (src/contacts/Imports.ts: the same readers, pacing, permits and limits),
 * in one transaction: a body that breaks or is cut short leaves nothing written.
 */
export class CustomerImport extends Effect.Service<CustomerImport>()("herald/customers/CustomerImport", {
  effect: Effect.gen(function*() {
    const repo = yield* CustomersRepo
    const imports = yield* Imports

    const run = (account: SecretKeyAccount, format: NonNullable<ReturnType<typeof importFormatOf>>, body: Upload["body"]) =>
      Effect.gen(function*() {
        const tally = new ImportTally()
        yield* imports.validBatches(body, format, CUSTOMER_ROWS, tally).pipe(
          Stream.runForEach((rows) => {
            const { batch, repeats } = foldRepeats(rows)
            return Effect.map(repo.upsertBatch(account.accountId, batch), (counts) => tally.upserted({ ...counts, duplicates: counts.duplicates + repeats }))
          })
        )
        return tally.customerReport()
      }).pipe(repo.transaction)

    const importCustomers = (account: SecretKeyAccount, upload: Upload) =>
      Effect.gen(function*() {
        const format = importFormatOf(upload.contentType)
        if (format === undefined) return yield* UnsupportedMediaType.of(upload.contentType)
        return yield* imports.withPermit(run(account, format, upload.body))
      })

    return { importCustomers } as const
  }),
  dependencies: [CustomersRepo.Default, Imports.Default]
}) {}
