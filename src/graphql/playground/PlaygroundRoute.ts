import { HttpLayerRouter, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, dirname, extname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const PLAYGROUND_PATH = "/graphql/playground"
const ASSETS_PATH = `${PLAYGROUND_PATH}/assets`

const JS = "text/javascript; charset=utf-8"
const CSS = "text/css; charset=utf-8"

/** Where a file of the page comes from: an installed package's build, or this folder. */
type Source = { readonly pkg: string; readonly file: string; readonly type: string } | { readonly own: string; readonly type: string }

/**
 * The page's files, in the order the page loads them: the UMD builds publish the globals the next
 * ones read (React, ReactDOM, graphqlWs, GraphiQL), then playground.js boots the editor.
 */
const SOURCES = {
  graphiqlCss: { pkg: "graphiql", file: "graphiql.min.css", type: CSS },
  pageCss: { own: "playground.css", type: CSS },
  react: { pkg: "react", file: "umd/react.production.min.js", type: JS },
  reactDom: { pkg: "react-dom", file: "umd/react-dom.production.min.js", type: JS },
  graphqlWs: { pkg: "graphql-ws", file: "umd/graphql-ws.min.js", type: JS },
  graphiql: { pkg: "graphiql", file: "graphiql.min.js", type: JS },
  page: { own: "playground.js", type: JS }
} satisfies Record<string, Source>

interface Asset {
  /** Served as /graphql/playground/assets/<name>; the name holds a hash of the content. */
  readonly name: string
  readonly type: string
  readonly body: Uint8Array
  readonly etag: string
}

// This folder in the source tree: the source runs from here, the bundle from dist/; both sit
// under the package root (as vendor/ does for metaSchema.ts).
const OWN_FOLDER = "src/graphql/playground"

const ownFile = (name: string): string => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(dir, OWN_FOLDER, name)
    if (existsSync(candidate)) return candidate
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`${OWN_FOLDER}/${name} is missing from the package`)
    dir = parent
  }
}

/** The file of a source: packages through Node's resolution (none exports its UMD build, so from its package.json). */
const pathOf = (source: Source): string =>
  "own" in source ? ownFile(source.own) : join(dirname(createRequire(import.meta.url).resolve(`${source.pkg}/package.json`)), source.file)

const load = (source: Source): Asset => {
  const path = pathOf(source)
  const body = readFileSync(path)
  const hash = createHash("sha256").update(body).digest("base64url").slice(0, 16)
  const extension = extname(path)
  return { name: `${basename(path, extension)}.${hash}${extension}`, type: source.type, body, etag: `"${hash}"` }
}

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * Only Herald's own files run (no inline script: the boot code is playground.js); GraphiQL injects
 * style elements and its fonts are data: URLs; the page talks to this origin only, its socket included.
 */
const contentSecurityPolicy = (host: string | undefined) => {
  const sockets = host !== undefined && HOST.test(host) ? ` ws://${host} wss://${host}` : ""
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self'${sockets}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

const page = (assets: Record<keyof typeof SOURCES, Asset>) => {
  const url = (asset: Asset) => `${ASSETS_PATH}/${asset.name}`
  const styles = [assets.graphiqlCss, assets.pageCss].map((a) => `<link rel="stylesheet" href="${url(a)}">`)
  const scripts = [assets.react, assets.reactDom, assets.graphqlWs, assets.graphiql, assets.page].map((a) => `<script src="${url(a)}"></script>`)
  return [
    "<!doctype html>",
    `<html lang="en">`,
    "<head>",
    `<meta charset="utf-8">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    "<title>Herald GraphQL playground</title>",
    `<link rel="icon" href="data:,">`,
    ...styles,
    "</head>",
    "<body>",
    `<div id="graphiql">Loading…</div>`,
    ...scripts,
    "</body>",
    "</html>",
    ""
  ].join("\n")
}

/** An asset's answer: cached for a year under its hashed name, 304 for a matching If-None-Match. */
const serveAsset = (asset: Asset) => (request: HttpServerRequest.HttpServerRequest) => {
  const headers = { "cache-control": "public, max-age=31536000, immutable", etag: asset.etag, "x-content-type-options": "nosniff" }
  const known = (request.headers["if-none-match"] ?? "").split(",").map((tag) => tag.trim().replace(/^W\//, ""))
  if (known.includes(asset.etag) || known.includes("*")) return Effect.succeed(HttpServerResponse.empty({ status: 304, headers }))
  return Effect.succeed(HttpServerResponse.uint8Array(asset.body, { contentType: asset.type, headers }))
}

/**
 * GET /graphql/playground: GraphiQL for the GraphQL API (docs/graphql.md, "Playground"), every
 * script and stylesheet served from the installed packages (no CDN), read once at start-up. The
 * page is public; the secret key is typed into GraphiQL's headers panel and sent only to this origin.
 */
export const PlaygroundRoute = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const assets = yield* Effect.orDie(Effect.try(() => {
      const loaded = {} as Record<keyof typeof SOURCES, Asset>
      for (const [key, source] of Object.entries(SOURCES)) loaded[key as keyof typeof SOURCES] = load(source)
      return loaded
    }))
    const html = page(assets)
    yield* router.add("GET", PLAYGROUND_PATH, (request) =>
      Effect.succeed(HttpServerResponse.text(html, {
        contentType: "text/html; charset=utf-8",
        headers: {
          "cache-control": "no-cache",
          "content-security-policy": contentSecurityPolicy(request.headers["host"]),
          "x-content-type-options": "nosniff",
          "referrer-policy": "no-referrer"
        }
      })))
    for (const asset of Object.values(assets)) yield* router.add("GET", `${ASSETS_PATH}/${asset.name}`, serveAsset(asset))
  })
)
