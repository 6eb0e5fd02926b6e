import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"

/** Every .ts/.tsx file under `root` with its text, paths relative to `root`. */
export const sourcesOf = (root: string): Map<string, string> => {
  const files = new Map<string, string>()
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (/\.tsx?$/.test(name)) files.set(relative(root, path), readFileSync(path, "utf8"))
    }
  }
  walk(root)
  return files
}

/**
 * The module a file belongs to for "one writer per table": its own file, except the actor runtime,
 * whose tables (actors' state, timers, outbox, poison, leases) are written by its parts as one.
 */
const moduleOf = (file: string) => (file.startsWith("actors/runtime/") ? "actors/runtime" : file)

/** Where statements are not a module's writes: schema changes, and the simulator's own database. */
const notWriters = (file: string) => file.startsWith("storage/migrations/") || file.startsWith("simulator/") || file.startsWith("gateway/simulator/")

/**
 * Tables and the modules that write them: every INSERT INTO / UPDATE / DELETE FROM in SQL text,
 * and every row an actor stages in its commit (`ctx.insert("t", …)` / `ctx.update("t", …)`).
 */
export const writersOf = (sources: ReadonlyMap<string, string>): Map<string, Set<string>> => {
  const writers = new Map<string, Set<string>>()
  const add = (table: string, file: string) => {
    const set = writers.get(table) ?? new Set<string>()
    set.add(moduleOf(file))
    writers.set(table, set)
  }
  for (const [file, text] of sources) {
    if (notWriters(file)) continue
    for (const match of text.matchAll(/\b(?:INSERT INTO|UPDATE|DELETE FROM)\s+([a-z_][a-z0-9_]*)\b/g)) {
      if (match[1] !== "set" && match[1] !== "of") add(match[1]!, file)
    }
    for (const match of text.matchAll(/\.(?:insert|update)\(\s*"([a-z_][a-z0-9_]*)"/g)) add(match[1]!, file)
  }
  return writers
}

/** Services (`Effect.Service` classes) by name, each with the file it is in and its options' text. */
export const servicesOf = (sources: ReadonlyMap<string, string>) => {
  const services = new Map<string, { readonly file: string; readonly body: string }>()
  for (const [file, text] of sources) {
    for (const match of text.matchAll(/export class (\w+) extends Effect\.Service<\w+>\(\)\(/g)) {
      // The options object: up to the class body that closes the declaration.
      const start = match.index! + match[0].length
      const end = text.indexOf("}) {}", start)
      services.set(match[1]!, { file, body: text.slice(start, end === -1 ? undefined : end) })
    }
  }
  return services
}
