import { describe, expect, it } from "@effect/vitest"
import { fileURLToPath } from "node:url"
import { cyclesOf, folderGraph, importGraph } from "./imports.ts"
import { servicesOf, sourcesOf, writersOf } from "./sources.ts"

/**
 * The shape of the code (issue 35, docs/architecture.md): one writer per table, services that
 * return domain values, no import circle, every service declaring what it needs. Each rule reads
 * the source, so a change that breaks one fails here with the place that breaks it.
 */
const SRC = fileURLToPath(new URL("../../src", import.meta.url))
const sources = sourcesOf(SRC)

describe("the shape of the code", () => {
  it("no import circle between files", () => {
    expect(cyclesOf(importGraph(SRC))).toEqual([])
  })

  it("no import circle between folders of src/", () => {
    expect(cyclesOf(folderGraph(importGraph(SRC)))).toEqual([])
  })

  it("each table has one writer module", () => {
    const several = [...writersOf(sources)].filter(([, modules]) => modules.size > 1).map(([table, modules]) => `${table}: ${[...modules].sort().join(", ")}`)
    expect(several).toEqual([])
  })

  // The simulator is an upstream's HTTP surface of its own: it answers as Meta's Graph API does.
  it("no service outside src/http, src/graphql and src/console builds an HTTP answer", () => {
    const answering = [...sources].filter(([file, text]) => !/^(http|graphql|console|simulator)\//.test(file) && /success: true\b/.test(text)).map(([file]) => file)
    expect(answering).toEqual([])
  })

  /**
   * The platform: connections and the actor runtime's client, built once by the node (node.ts) for
   * everything, like the SqlClient and AppConfig; the runtime's own services are its parts.
   */
  const PLATFORM = new Set(["Nats", "Storage", "ActorClient", "Outbox"])

  it("every service declares the services it uses as dependencies", () => {
    const services = servicesOf(sources)
    const undeclared: Array<string> = []
    for (const [name, { body, file }] of services) {
      if (file.startsWith("actors/runtime/") || file.startsWith("bus/")) continue
      const declared = /dependencies:\s*\[([^\]]*)\]/.exec(body)?.[1] ?? ""
      const used = new Set([...body.matchAll(/yield\*\s+(\w+)\b/g)].map((m) => m[1]!).filter((used) => used !== name && services.has(used) && !PLATFORM.has(used)))
      // A read cache listens to the change feed (storage/ReadCache.ts).
      if (body.includes("makeReadCache")) used.add("ChangeFeed")
      for (const dependency of used) {
        if (!new RegExp(`\\b${dependency}\\.`).test(declared)) undeclared.push(`${name} (${file}) uses ${dependency}`)
      }
    }
    expect(undeclared).toEqual([])
  })
})
