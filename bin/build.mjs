// Builds src/ into one ES module (dist/herald.mjs, packages left external) with esbuild, and the
// client commands alone into dist/herald-client.mjs. Running
// the bundle instead of loading every .ts file through a loader hook saves about 100 MB of RSS per
// node and half the start-up time. `bin/herald.js` rebuilds it whenever a source is newer.
import { build } from "esbuild"
import { mkdirSync, readdirSync, renameSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = join(dirname(fileURLToPath(import.meta.url)), "..")
export const bundlePath = join(root, "dist", "herald.mjs")
/** The client commands alone (src/cli/client/main.ts): none of the server's modules. */
export const clientBundlePath = join(root, "dist", "herald-client.mjs")
const BUNDLES = [
  { entry: join(root, "src", "main.ts"), out: bundlePath, options: { packages: "external", sourcemap: "inline", sourcesContent: false } },
  // Packages bundled too, so that esbuild keeps only the parts of effect and @effect/* the client
  // uses (importing their index modules costs 80 to 120 MB and most of a second), and no source
  // map: `herald api` starts in about a quarter of a second and 90 MB instead of a second and 170.
  {
    entry: join(root, "src", "cli", "client", "main.ts"),
    out: clientBundlePath,
    options: {
      mainFields: ["module", "main"],
      // Bundled CommonJS packages call require.
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" }
    }
  }
]

const newestSource = (dir) => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs)
  }
  return newest
}

export const isFresh = () => {
  try {
    const built = Math.min(...BUNDLES.map((bundle) => statSync(bundle.out).mtimeMs))
    return built >= newestSource(join(root, "src")) && built >= statSync(join(root, "package.json")).mtimeMs
  } catch {
    return false
  }
}

export const buildBundle = async () => {
  mkdirSync(dirname(bundlePath), { recursive: true })
  // Several processes may start at once: each builds to its own files and renames them into place.
  await Promise.all(BUNDLES.map(async ({ entry, out, options }) => {
    const temp = `${out}.${process.pid}.tmp`
    await build({
      entryPoints: [entry],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: temp,
      logLevel: "warning",
      ...options
    })
    renameSync(temp, out)
  }))
  return bundlePath
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildBundle()
  console.log(bundlePath)
}
