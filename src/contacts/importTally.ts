import { toE164 } from "../messaging/phone.ts"
import { FieldIssue, InvalidRequest } from "../domain/errors.ts"
import type { ParsedRow } from "./contactRow.ts"
import { INVALID_REPORTED_MAX, INVALID_ROWS_MAX } from "./importLimits.ts"

export interface InvalidRow {
  readonly row: number
  readonly phone: string
  readonly reason: string
}

/** A row that passed: its phone in E.164, ready to be written. */
export interface ValidContact {
  readonly phone: string
  readonly name: string | null
  readonly params: string | null
  readonly userId: string | null
  readonly tags: string | null
}

/** A batch of valid rows, column by column, as the INSERT … FROM unnest takes them. */
export interface Batch {
  readonly phones: Array<string>
  readonly names: Array<string | null>
  readonly params: Array<string | null>
}

export const columnsOf = (contacts: Iterable<ValidContact>): Batch => {
  const batch: Batch = { phones: [], names: [], params: [] }
  for (const contact of contacts) {
    batch.phones.push(contact.phone)
    batch.names.push(contact.name)
    batch.params.push(contact.params)
  }
  return batch
}

/** A phone as reported back: what the client wrote, cut short so that 100 of them stay small. */
const PHONE_REPORTED_MAX = 64

/** An import's outcome (src/http/importReport.ts presents it). */
export interface ImportReport {
  readonly added: number
  readonly duplicates: number
  readonly invalid: ReadonlyArray<{ readonly row: number; readonly phone: string; readonly reason: string }>
  readonly invalidCount: number
}

export interface CustomerImportReport extends ImportReport {
  readonly updated: number
}

/**
 * The running account of one import: every data row ends up added, a duplicate (its E.164 number
 * already in the list, from this import or an earlier one) or invalid, so
 * added + duplicates + invalid_count is the number of data rows read.
 */
export class ImportTally {
  private added = 0
  private updated = 0
  private duplicates = 0
  private invalidCount = 0
  private read = 0
  private readonly invalid: Array<InvalidRow> = []

  /** Normalises each row's phone to E.164: valid rows are added to `valid`, invalid ones counted. */
  sort(rows: Iterable<ParsedRow>, valid: Array<ValidContact>): void {
    for (const row of rows) {
      this.read++
      if (row._tag === "Malformed") {
        this.invalidRow(row.row, row.phone, row.reason)
        continue
      }
      const phone = toE164(row.phone)
      if ("problem" in phone) {
        this.invalidRow(row.row, row.phone, phone.problem)
        continue
      }
      valid.push({ phone: phone.e164, name: row.name, params: row.params, userId: row.userId ?? null, tags: row.tags ?? null })
    }
  }

  /** A batch of `valid` rows was written and `inserted` of them were new to the list. */
  written(valid: number, inserted: number): void {
    this.added += inserted
    this.duplicates += valid - inserted
  }

  /** A batch of a customer import was written: new customers, existing ones changed, repeats of the file's own rows. */
  upserted(counts: { readonly added: number; readonly updated: number; readonly duplicates: number }): void {
    this.added += counts.added
    this.updated += counts.updated
    this.duplicates += counts.duplicates
  }

  /** Whether the import should stop: past INVALID_ROWS_MAX invalid rows, and most of those read. */
  overwhelmed(): boolean {
    return this.invalidCount > INVALID_ROWS_MAX && this.invalidCount * 2 > this.read
  }

  /** Why an overwhelmed import stopped: the 400 naming its first invalid rows. */
  refusal(): InvalidRequest {
    const errors = this.invalid.map((row) => new FieldIssue({ path: `row ${row.row}`, message: row.reason }))
    return new InvalidRequest({
      message: `the import stopped: ${this.invalidCount} of the first ${this.read} rows are invalid (the first ${errors.length} are listed); nothing was imported. Check that this is a contact list with a phone column.`,
      errors
    })
  }

  /** What the import did: rows added, duplicates, and the invalid rows (the first ones, and how many). */
  report(): ImportReport {
    return { added: this.added, duplicates: this.duplicates, invalid: this.invalid, invalidCount: this.invalidCount }
  }

  /** A customer import's report: also the rows that changed an existing customer. */
  customerReport(): CustomerImportReport {
    return { ...this.report(), updated: this.updated }
  }

  private invalidRow(row: number, phone: string, reason: string) {
    this.invalidCount++
    if (this.invalid.length < INVALID_REPORTED_MAX) this.invalid.push({ row, phone: phone.slice(0, PHONE_REPORTED_MAX), reason })
  }
}
