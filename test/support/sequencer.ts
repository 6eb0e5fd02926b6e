import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * Files that run several Herald processes under a workload (a NATS cluster, kills, a broadcast of
 * thousands, the fuzzer): each keeps both cores busy for minutes. Three of them at once on a
 * 2-core machine made timing-sensitive rules fail (a gateway answer past its timeout, a pool with
 * no free connection), and vitest's own order runs exactly those first, together: the longest
 * files (or, on a fresh clone, the largest).
 */
const HEAVY = /test\/cluster\/|crash|faults|graceful-stop|ownership|hostile-input|broadcasts\.test|broadcast-message-events|broadcast-db-outage|rate-limits-lag|webhooks-backlog|dependencies\.test/

/**
 * Of the other files, the share the heavy ones are spread among. The rest (vitest puts the
 * smallest, mostly unit files, last) ends the run: a heavy file started near the end kept one
 * worker busy for minutes after the other had finished.
 */
const HEAVY_SPREAD_OVER = 0.6

/**
 * vitest's order, with the heavy files spread out: one heavy file, then an even share of the
 * others, and so on, so that the workers rarely hold two heavy files at once; the last of the
 * others end the run.
 */
export class SpreadHeavySequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const ordered = await super.sort(files)
    const heavy = ordered.filter((f) => HEAVY.test(f.moduleId))
    const light = ordered.filter((f) => !HEAVY.test(f.moduleId))
    if (heavy.length === 0) return ordered
    const share = Math.ceil((light.length * HEAVY_SPREAD_OVER) / heavy.length)
    const out: Array<TestSpecification> = []
    heavy.forEach((file, i) => out.push(file, ...light.slice(i * share, (i + 1) * share)))
    out.push(...light.slice(heavy.length * share))
    return out
  }
}
