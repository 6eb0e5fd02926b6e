/**
 * What Herald can store. Postgres text and jsonb refuse the NUL character (U+0000), and jsonb
 * refuses an unpaired UTF-16 surrogate (JSON can carry one as `\ud800`, UTF-8 cannot); a value
 * holding either is refused where it enters (a 400 naming the field, an import row counted
 * invalid), never at the INSERT, where it would surface as a 500 or a command that cannot commit.
 * Nesting is bounded too: nothing Herald takes nests deeper than a few levels, and formatting the
 * error of a 10,000-deep value overflowed the stack.
 */

/** Deepest nesting of arrays and objects accepted anywhere a client sends JSON. */
export const NESTING_MAX = 32

// Node 20 has String.prototype.isWellFormed (ES2024); the project's lib is ES2023.
const wellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed()

/** Why `text` cannot be stored, or undefined when it can. */
export const unstorableText = (text: string): string | undefined => {
  if (text.includes("\u0000")) return "contains a NUL character (U+0000), which cannot be stored"
  if (!wellFormed(text)) return "contains an unpaired UTF-16 surrogate (not valid Unicode), which cannot be stored"
  return undefined
}

/**
 * `text` made storable, for text Herald writes about something else (an error message quoting a
 * refused value): NUL characters spelled `\u0000`, unpaired surrogates replaced by U+FFFD.
 */
export const storableText = (text: string): string =>
  (text.replaceAll("\u0000", "\\u0000") as unknown as { toWellFormed(): string }).toWellFormed()

export interface Unstorable {
  /** Dotted path of the value (`contacts.3.name`); an object key that is itself unstorable is named by its parent. */
  readonly path: string
  readonly message: string
}

interface Visit {
  readonly value: unknown
  readonly key: string | number | undefined
  readonly parent: Visit | undefined
  readonly depth: number
}

/** The dotted path of a visited value, built only when one is reported (copying it at each level is quadratic). */
const pathOf = (visit: Visit): string => {
  const keys: Array<string | number> = []
  for (let v: Visit | undefined = visit; v !== undefined && v.key !== undefined; v = v.parent) keys.push(v.key)
  return keys.reverse().join(".")
}

/**
 * The first value inside `value` that cannot be stored (a string or an object key), or nesting
 * deeper than `maxDepth`; undefined when everything can be. Iterative, so any depth is safe.
 */
export const firstUnstorable = (value: unknown, maxDepth = NESTING_MAX): Unstorable | undefined => {
  const stack: Array<Visit> = [{ value, key: undefined, parent: undefined, depth: 0 }]
  while (stack.length > 0) {
    const visit = stack.pop()!
    const v = visit.value
    if (typeof v === "string") {
      const why = unstorableText(v)
      if (why !== undefined) return { path: pathOf(visit), message: why }
      continue
    }
    if (typeof v !== "object" || v === null) continue
    if (visit.depth >= maxDepth) return { path: pathOf(visit), message: `nests deeper than ${maxDepth} levels` }
    const depth = visit.depth + 1
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: visit, depth })
      continue
    }
    const keys = Object.keys(v)
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!
      const why = unstorableText(key)
      if (why !== undefined) return { path: pathOf(visit), message: `has a key that ${why}` }
      stack.push({ value: (v as Record<string, unknown>)[key], key, parent: visit, depth })
    }
  }
  return undefined
}
