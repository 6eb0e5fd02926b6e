// Builds src/ into one ES module (dist/herald.mjs, packages left external but @effect/cli, see
// CLI_FIXES) with esbuild, the client commands alone into dist/herald-client.mjs and the
// operator's one-shot commands (migrate, admin) alone into dist/herald-admin.mjs. Running the
// bundle instead of loading every .ts file through a loader hook saves about 100 MB of RSS per
// node and half the start-up time. `bin/herald.js` rebuilds them whenever a source is newer.
// esbuild itself is imported only to build: a command whose bundles are fresh does not load it.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = join(dirname(fileURLToPath(import.meta.url)), "..")
export const bundlePath = join(root, "dist", "herald.mjs")
/** The client commands alone (src/cli/client/main.ts): none of the server's modules. */
export const clientBundlePath = join(root, "dist", "herald-client.mjs")
/** The operator's one-shot commands alone (src/cli/operatorMain.ts): `herald migrate` and `herald admin …`. */
export const operatorBundlePath = join(root, "dist", "herald-admin.mjs")
/** The console's browser code (src/console/web) and the manifest naming its files (docs/console.md). */
export const consoleDir = join(root, "dist", "console")
export const consoleManifestPath = join(consoleDir, "manifest.json")

/**
 * Two faults of @effect/cli's help (0.77), fixed in its code as it is bundled. Each names the text
 * it replaces: when an upgrade changes that text the build fails here, to be looked at again
 * (drop the fix if upstream made it; test/e2e/cli-help.test.ts says whether the help is right).
 */
const CLI_FIXES = [
  {
    file: "internal/commandDescriptor.js",
    // A group's usage already starts with the names before it: prefixing them again listed
    // `herald admin poison list` as `admin admin poison list` in `herald --help`.
    from: "getUsage(child, Arr.append(preceding, usage))",
    to: "getUsage(child, Arr.of(usage))"
  },
  {
    file: "internal/cliApp.js",
    // Every help page began with the program's name twice: a banner `herald`, then `herald 0.1.0`.
    from: "const helpDoc = pipe(banner, InternalHelpDoc.sequence(header),",
    to: "const helpDoc = pipe(header,"
  }
]

/**
 * Bundles @effect/cli (the server's bundle leaves other packages external) and applies CLI_FIXES
 * to it. Its own imports of effect and @effect/* stay external there, so there is one effect.
 */
const effectCliFixes = {
  name: "effect-cli-fixes",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^@effect\/cli(\/|$)/ }, (args) => ({ path: fileURLToPath(import.meta.resolve(args.path)) }))
    const files = new RegExp(`@effect/cli/dist/esm/(${CLI_FIXES.map((f) => f.file.replace(/[./]/g, "\\$&")).join("|")})$`)
    pluginBuild.onLoad({ filter: files }, (args) => {
      let contents = readFileSync(args.path, "utf8")
      for (const fix of CLI_FIXES.filter((f) => args.path.endsWith(f.file))) {
        if (!contents.includes(fix.from)) throw new Error(`bin/build.mjs: @effect/cli changed, ${fix.file} no longer holds ${JSON.stringify(fix.from)}`)
        contents = contents.replace(fix.from, fix.to)
      }
      return { contents, loader: "js" }
    })
  }
}

const BUNDLES = [
  {
    entry: join(root, "src", "main.ts"),
    out: bundlePath,
    options: { packages: "external", sourcemap: "inline", sourcesContent: false }
  },
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
  },
  // The same for the operator's commands: `herald admin wallet-credit` in about a third of a
  // second of CPU instead of one and a half (docs/benchmarks.md, startup-admin). A native addon
  // cannot be bundled (argon2), nor an optional driver that is not installed (pg-native).
  {
    entry: join(root, "src", "cli", "operatorMain.ts"),
    out: operatorBundlePath,
    options: {
      mainFields: ["module", "main"],
      external: ["@node-rs/argon2", "pg-native"],
      // Named apart: a bundled module of its own imports createRequire too.
      banner: { js: "import { createRequire as heraldCreateRequire } from 'node:module'; const require = heraldCreateRequire(import.meta.url);" }
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
    const built = Math.min(...[...BUNDLES.map((bundle) => bundle.out), consoleManifestPath].map((file) => statSync(file).mtimeMs))
    return built >= newestSource(join(root, "src")) &&
      [join(root, "package.json"), fileURLToPath(import.meta.url)].every((file) => built >= statSync(file).mtimeMs)
  } catch {
    return false
  }
}

export const buildBundle = async () => {
  const { build } = await import("esbuild")
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
      plugins: [effectCliFixes],
      ...options
    })
    renameSync(temp, out)
  }), buildConsole())
  return bundlePath
}

/**
 * The console's page code: Preact and TSX to one minified ES module and one stylesheet, named by
 * content hash (served for a year), and manifest.json naming them, written last and atomically. A
 * console that does not build leaves the server's start alone: the page then answers 503 naming
 * the problem (the server does not depend on it).
 */
export const buildConsole = async () => {
  const { build } = await import("esbuild")
  mkdirSync(consoleDir, { recursive: true })
  try {
    const result = await build({
      entryPoints: { app: join(root, "src", "console", "web", "main.tsx") },
      bundle: true,
      platform: "browser",
      format: "esm",
      target: ["chrome110", "firefox110", "safari16"],
      jsx: "automatic",
      jsxImportSource: "preact",
      minify: true,
      outdir: consoleDir,
      entryNames: "[name].[hash]",
      metafile: true,
      legalComments: "none",
      logLevel: "silent"
    })
    const files = Object.keys(result.metafile.outputs).map((path) => path.split("/").pop())
    const manifest = { js: files.find((f) => f.endsWith(".js")), css: files.find((f) => f.endsWith(".css")) ?? null }
    const temp = `${consoleManifestPath}.${process.pid}.tmp`
    writeFileSync(temp, JSON.stringify(manifest))
    renameSync(temp, consoleManifestPath)
    // Files of earlier builds go; a page still open asks for the new ones on its next load.
    for (const name of readdirSync(consoleDir)) {
      if (name !== "manifest.json" && !name.endsWith(".tmp") && name !== manifest.js && name !== manifest.css) rmSync(join(consoleDir, name), { force: true })
    }
  } catch (error) {
    const problem = String(error?.message ?? error).split("\n").slice(0, 20).join("\n")
    const temp = `${consoleManifestPath}.${process.pid}.tmp`
    writeFileSync(temp, JSON.stringify({ error: problem }))
    renameSync(temp, consoleManifestPath)
    process.stderr.write(`herald: the console did not build (the API is unaffected; /console answers 503):\n${problem}\n`)
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildBundle()
  console.log(bundlePath)
}
