#!/usr/bin/env node
// Runs every bench/*.bench.ts (or those whose name contains an argument) one after another; each
// prints one JSON line on stdout.
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const filters = process.argv.slice(2)
const scripts = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort()
let failed = 0
for (const script of scripts) {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(here, script)], { stdio: ["ignore", "inherit", "inherit"] })
  if (r.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
