import { Effect } from "effect"
import { describeIssues, FieldIssue, InvalidRequest } from "../domain/errors.ts"
import { MAX_TAG_LENGTH, traitNameProblem } from "./traitFilters.ts"

/** Bounds of what a customer carries (docs/customers.md, Limits). */
export const MAX_TRAITS = 200
export const MAX_TRAITS_BYTES = 32 * 1024
export const MAX_TAGS = 100
export const MAX_NAME = 256
export const MAX_USER_ID = 256

export type Traits = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The changes a track/users call asks for: traits to set, traits to remove (null), tags to add. */
export interface TraitChanges {
  readonly set: Traits
  readonly remove: ReadonlyArray<string>
  readonly addTags: ReadonlyArray<string>
}

export const parseTraitChanges = (traits: unknown, tags: unknown, issues: Array<FieldIssue>): TraitChanges => {
  const set: Record<string, unknown> = {}
  const remove: Array<string> = []
  if (traits !== undefined && traits !== null) {
    if (!isRecord(traits)) issues.push(new FieldIssue({ path: "traits", message: "must be a JSON object of trait names to values" }))
    else if (Object.keys(traits).length > MAX_TRAITS) issues.push(new FieldIssue({ path: "traits", message: `must have at most ${MAX_TRAITS} traits` }))
    else {
      for (const [name, value] of Object.entries(traits)) {
        const problem = traitNameProblem(name)
        if (problem !== undefined) issues.push(new FieldIssue({ path: `traits[${JSON.stringify(name.slice(0, 40))}]`, message: `the trait's name ${problem}` }))
        else if (value === null) remove.push(name)
        else set[name] = value
      }
    }
  }
  const addTags: Array<string> = []
  if (tags !== undefined && tags !== null) {
    if (!Array.isArray(tags) || tags.length > MAX_TAGS) issues.push(new FieldIssue({ path: "tags", message: `must be a list of at most ${MAX_TAGS} tags` }))
    else {
      tags.forEach((tag, i) => {
        if (typeof tag !== "string" || tag.trim().length === 0 || tag.length > MAX_TAG_LENGTH) {
          issues.push(new FieldIssue({ path: `tags[${i}]`, message: `must be a tag (1 to ${MAX_TAG_LENGTH} characters)` }))
        } else if (!addTags.includes(tag)) addTags.push(tag)
      })
    }
  }
  return { set, remove, addTags }
}

/** A customer's traits and tags after `changes`, or what makes the result too large. */
export const applyTraitChanges = (
  current: { readonly traits: Traits; readonly tags: ReadonlyArray<string> },
  changes: TraitChanges
): { readonly traits: Traits; readonly tags: ReadonlyArray<string> } | { readonly issues: ReadonlyArray<FieldIssue> } => {
  const traits: Record<string, unknown> = { ...current.traits, ...changes.set }
  for (const name of changes.remove) delete traits[name]
  const tags = [...current.tags, ...changes.addTags.filter((tag) => !current.tags.includes(tag))]
  const issues: Array<FieldIssue> = []
  if (Object.keys(traits).length > MAX_TRAITS) issues.push(new FieldIssue({ path: "traits", message: `a customer has at most ${MAX_TRAITS} traits; this would make ${Object.keys(traits).length}` }))
  const bytes = Buffer.byteLength(JSON.stringify(traits))
  if (bytes > MAX_TRAITS_BYTES) issues.push(new FieldIssue({ path: "traits", message: `a customer's traits are at most ${MAX_TRAITS_BYTES} bytes of JSON; this would make ${bytes}` }))
  if (tags.length > MAX_TAGS) issues.push(new FieldIssue({ path: "tags", message: `a customer has at most ${MAX_TAGS} tags; this would make ${tags.length}` }))
  return issues.length > 0 ? { issues } : { traits, tags }
}

/**
 * An upsert's merge (CustomersRepo.upsert and update): the traits and tags after `changes`, tags
 * added to the customer's or, with `replaceTags`, instead of them; refused, with nothing written,
 * when the result is too large.
 */
export const mergeWith = (changes: TraitChanges, replaceTags = false) => (current: { readonly traits: Traits; readonly tags: ReadonlyArray<string> }) => {
  const next = applyTraitChanges(replaceTags ? { ...current, tags: [] } : current, changes)
  return "issues" in next ? Effect.fail(new InvalidRequest({ message: describeIssues(next.issues), errors: [...next.issues] })) : Effect.succeed(next)
}

/**
 * A customer's name or user id as sent: trimmed, 1 to `max` characters. Undefined (left as it is)
 * and null (cleared, where a PATCH allows it) pass through.
 */
export const customerText = <T extends string | null | undefined>(value: T, path: string, max: number, issues: Array<FieldIssue>): T => {
  if (value === undefined || value === null) return value
  const trimmed = value.trim()
  if (trimmed.length === 0 || value.length > max) issues.push(new FieldIssue({ path, message: `must be 1 to ${max} characters` }))
  return trimmed as T
}
