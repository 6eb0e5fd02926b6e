import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

/** Every relative import of every .ts/.tsx file under `root` (type-only imports included). */
export const importGraph = (root: string): Map<string, Set<string>> => {
  const graph = new Map<string, Set<string>>()
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (/\.tsx?$/.test(name)) {
        const text = readFileSync(path, "utf8")
        const targets = new Set<string>()
        for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/g)) {
          targets.add(relative(root, resolve(dirname(path), match[1]!)))
        }
        graph.set(relative(root, path), targets)
      }
    }
  }
  walk(root)
  return graph
}

/** The cycles of a graph (each once, as the list of its nodes), by Tarjan's strongly connected components. */
export const cyclesOf = (graph: ReadonlyMap<string, ReadonlySet<string>>): Array<Array<string>> => {
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const components: Array<Array<string>> = []
  const connect = (node: string) => {
    indices.set(node, index)
    low.set(node, index++)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue
      if (!indices.has(next)) {
        connect(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!))
    }
    if (low.get(node) === indices.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1 || graph.get(node)?.has(node)) components.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!indices.has(node)) connect(node)
  return components
}

/** The graph of feature folders (src/<folder>): an edge where a file of one imports a file of another. */
export const folderGraph = (files: ReadonlyMap<string, ReadonlySet<string>>): Map<string, Set<string>> => {
  const folderOf = (path: string) => path.split("/")[0]!
  const graph = new Map<string, Set<string>>()
  for (const [file, targets] of files) {
    const from = folderOf(file)
    const edges = graph.get(from) ?? new Set<string>()
    graph.set(from, edges)
    for (const target of targets) if (folderOf(target) !== from) edges.add(folderOf(target))
  }
  return graph
}
