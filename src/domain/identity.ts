import { Schema } from "effect"

export const Role = Schema.Literal("owner", "operator", "viewer")
export type Role = typeof Role.Type

// Deliberately permissive (RFC 5322 allows far more than any form should); the address is
// confirmed by whoever uses it, this only rejects what cannot be an address at all.
const EMAIL = /^[^\s@]{1,64}@[^\s@.]+(\.[^\s@.]+)+$/

export const Email = Schema.Trim.pipe(
  Schema.maxLength(254),
  Schema.filter((s) => EMAIL.test(s) || "must be an e-mail address"),
  Schema.transform(Schema.String, { strict: true, decode: (s) => s.toLowerCase(), encode: (s) => s }),
  Schema.brand("Email")
)
export type Email = typeof Email.Type

/** Password policy: long enough to resist guessing, short enough to keep argon2 cheap to call. */
export const Password = Schema.String.pipe(
  Schema.minLength(8, { message: () => "must be at least 8 characters" }),
  Schema.maxLength(256, { message: () => "must be at most 256 characters" }),
  Schema.brand("Password")
)
export type Password = typeof Password.Type

export const AccountLabel = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200))

/** A money amount in the account's currency, at most 4 decimals (the ledger's precision). */
export const Amount = Schema.String.pipe(
  Schema.filter((s) => /^\d{1,14}(\.\d{1,4})?$/.test(s) || "must be a positive amount with at most 4 decimals"),
  Schema.filter((s) => Number(s) > 0 || "must be greater than zero")
)
