import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { envelope } from "../http/errors.ts"

export const CONSOLE_PAGE = "/console"
const ASSETS = "/console/assets"

/**
 * Only the console's own files run and load (no inline script or style: Preact sets styles through
 * the CSSOM, which style-src does not govern), it talks to this origin only, and no other site
 * may frame it.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

const PAGE_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "cache-control": "no-store"
}

interface Manifest {
  readonly js?: string
  readonly css?: string | null
  readonly error?: string
}

/** dist/console, built by bin/build.mjs beside the server's bundle; found from here whether the bundle or the source runs. */
const consoleDir = (): string | undefined => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(dir, "dist", "console")
    if (existsSync(join(candidate, "manifest.json"))) return candidate
    if (existsSync(join(dir, "console", "manifest.json")) && dir.endsWith("dist")) return join(dir, "console")
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

interface Built {
  readonly page: string
  readonly assets: ReadonlyMap<string, { readonly body: Uint8Array; readonly type: string }>
}

const load = (): Built | string => {
  const dir = consoleDir()
  if (dir === undefined) return "the console is not built: run node bin/build.mjs (npm start does)"
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Manifest
  if (manifest.error !== undefined || manifest.js === undefined) return `the console did not build: ${manifest.error ?? "no script"}`
  const assets = new Map<string, { body: Uint8Array; type: string }>()
  assets.set(manifest.js, { body: readFileSync(join(dir, manifest.js)), type: "text/javascript; charset=utf-8" })
  if (manifest.css) assets.set(manifest.css, { body: readFileSync(join(dir, manifest.css)), type: "text/css; charset=utf-8" })
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>Herald console</title>
${manifest.css ? `<link rel="stylesheet" href="${ASSETS}/${manifest.css}">\n` : ""}<script type="module" src="${ASSETS}/${manifest.js}"></script>
</head>
<body>
<div id="app"><noscript>The Herald console needs JavaScript.</noscript></div>
</body>
</html>
`
  return { page, assets }
}

/**
 * The console's page at /console and every path under it (the page routes in the browser), and its
 * files under /console/assets, read once from dist/console (docs/console.md).
 */
export const ConsolePages = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const built = load()
    const html = typeof built === "string"
      ? envelope(503, "service_unavailable", built)
      : HttpServerResponse.text(built.page, { contentType: "text/html; charset=utf-8", headers: PAGE_HEADERS })
    // The console's JSON routes are its own; an unknown one is a JSON 404, not the page.
    const page = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
      request.url.startsWith("/console/api/") ? envelope(404, "not_found", `no console route ${request.url.split("?")[0]}`) : html)
    yield* router.add("GET", CONSOLE_PAGE, page)
    yield* router.add("GET", `${CONSOLE_PAGE}/*`, page)
    yield* router.add(
      "GET",
      `${ASSETS}/:name`,
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
        const name = request.url.split("?")[0]!.slice(ASSETS.length + 1)
        const asset = typeof built === "string" ? undefined : built.assets.get(name)
        if (asset === undefined) return envelope(404, "not_found", `no console file ${name}`)
        return HttpServerResponse.uint8Array(asset.body, {
          contentType: asset.type,
          headers: { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" }
        })
      })
    )
  })
)
