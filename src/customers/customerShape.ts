import { Effect } from "effect"
import { describeIssues, FieldIssue, InvalidRequest } from "../domain/errors.ts"
import { toE164 } from "../messaging/phone.ts"

/** A customer inside another answer (a conversation's): the same names. */
export const presentCustomerRef = (customer: { readonly id: string; readonly phone: string; readonly name: string | null }) => ({
  id: customer.id,
  phone: customer.phone,
  name: customer.name
})

/**
 * The two spellings a customer's field has on input: Interakt's (`fullPhoneNumber`, `userId`, the
 * public API's request names) and the answers' (`phone`, `user_id`). Each surface takes both; the
 * first of a pair is the one the surface documents, which an error names when neither was given.
 */
export type Spellings = readonly [documented: string, other: string]

export const PUBLIC_PHONE: Spellings = ["fullPhoneNumber", "phone"]
export const PUBLIC_USER_ID: Spellings = ["userId", "user_id"]
export const APP_PHONE: Spellings = ["phone", "fullPhoneNumber"]
export const APP_USER_ID: Spellings = ["user_id", "userId"]

export type Spelled<T> = { readonly value: T; readonly path: string }

/**
 * The value of a field given under either spelling, and the name it came under (which its errors
 * name). Both given is unambiguous only when they say the same (`same` compares them): otherwise
 * an issue naming both. Neither given: the value undefined, the documented name.
 */
export const eitherSpelling = <T>(
  input: object,
  [documented, other]: Spellings,
  issues: Array<FieldIssue>,
  same: (a: T, b: T) => boolean = (a, b) => a === b
): Spelled<T | undefined> => {
  const first = (input as Record<string, unknown>)[documented] as T | undefined
  const second = (input as Record<string, unknown>)[other] as T | undefined
  if (first === undefined) return second === undefined ? { value: undefined, path: documented } : { value: second, path: other }
  if (second !== undefined && !same(first, second)) {
    issues.push(new FieldIssue({ path: documented, message: `and ${other} are the same field under two names and differ: give one` }))
  }
  return { value: first, path: documented }
}

/** Two phone numbers are the same when they read as the same E.164 number (or are the same text). */
export const samePhone = (a: unknown, b: unknown) => {
  if (a === b) return true
  // An import line may write a phone as a number (a spreadsheet's export).
  const text = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) ? String(v) : v)
  const [p, q] = [text(a), text(b)]
  if (typeof p !== "string" || typeof q !== "string") return false
  const [x, y] = [toE164(p), toE164(q)]
  return "e164" in x && "e164" in y && x.e164 === y.e164
}

/** A customer's phone under either spelling, required: E.164, or an issue naming the field as given. */
export const customerPhone = (input: object, spellings: Spellings, issues: Array<FieldIssue>): string | undefined => {
  const { path, value } = eitherSpelling<unknown>(input, spellings, issues, samePhone)
  if (value === undefined || value === null) {
    issues.push(new FieldIssue({ path, message: "is required: the customer's phone number with its country code" }))
    return undefined
  }
  if (typeof value !== "string") {
    issues.push(new FieldIssue({ path, message: "must be a string" }))
    return undefined
  }
  const phone = toE164(value)
  if ("problem" in phone) {
    issues.push(new FieldIssue({ path, message: phone.problem }))
    return undefined
  }
  return phone.e164
}

/**
 * The customer's phone of a request that names a customer by phone (the public API's chats/assign
 * and chats/resolve): E.164, or 400 `invalid_request` naming the field as given.
 */
export const readCustomerPhone = (input: object, spellings: Spellings = PUBLIC_PHONE) =>
  Effect.suspend(() => {
    const issues: Array<FieldIssue> = []
    const phone = customerPhone(input, spellings, issues)
    return phone === undefined || issues.length > 0
      ? Effect.fail(new InvalidRequest({ message: describeIssues(issues), errors: issues }))
      : Effect.succeed(phone)
  })
