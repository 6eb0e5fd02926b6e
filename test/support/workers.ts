import { fileURLToPath } from "node:url"
import { type HeraldProcess, startHerald } from "./HeraldProcess.ts"
import { envFor, type Isolation } from "./isolation.ts"

const SCRIPT = fileURLToPath(new URL("./actorWorker.ts", import.meta.url))

export interface Worker extends HeraldProcess {
  readonly nodeId: string
  /** What the node reports owning: kind → partitions; undefined when it does not answer. */
  readonly owned: () => Promise<Record<string, Array<number>> | undefined>
}

/** Starts a worker node process (role worker) hosting the test kinds; resolves once it is ready. */
export const startWorker = async (iso: Isolation, nodeId: string, env: Record<string, string> = {}, nodeArgs: ReadonlyArray<string> = []): Promise<Worker> => {
  const node = await startHerald(envFor(iso, { HERALD_ROLE: "worker", HERALD_NODE_ID: nodeId, LOG_LEVEL: "warning", ...env }), {
    entry: { argv: [...nodeArgs, "--import", "tsx", SCRIPT] }
  })
  return {
    ...node,
    nodeId,
    owned: () =>
      fetch(`${node.url}/health/ready`, { signal: AbortSignal.timeout(2_000) }).then(
        async (r) => ((await r.json()) as { partitions_owned: Record<string, Array<number>> }).partitions_owned,
        () => undefined
      )
  }
}

/** Owned partitions of one kind, by node, sampled from all nodes at once. */
export const ownership = async (workers: ReadonlyArray<Worker>, kind: string) => {
  const reports = await Promise.all(workers.map(async (w) => [w.nodeId, (await w.owned())?.[kind] ?? []] as const))
  const owners = new Map<number, Array<string>>()
  for (const [node, partitions] of reports) for (const p of partitions) owners.set(p, [...(owners.get(p) ?? []), node])
  return { reports: Object.fromEntries(reports), owners }
}
