import type { CustomerImportReport, ImportReport } from "../contacts/importTally.ts"

/** A contact list import's answer (POST /api/v1/rcs/contact-lists/{id}/contacts). */
export const presentImportReport = (report: ImportReport) => ({
  success: true as const,
  added: report.added,
  duplicates: report.duplicates,
  invalid: report.invalid,
  invalid_count: report.invalidCount
})

/** A customer import's answer (POST /api/v1/app/contacts/import): also the customers it changed. */
export const presentCustomerImportReport = (report: CustomerImportReport) => ({
  success: true as const,
  added: report.added,
  updated: report.updated,
  duplicates: report.duplicates,
  invalid: report.invalid,
  invalid_count: report.invalidCount
})
