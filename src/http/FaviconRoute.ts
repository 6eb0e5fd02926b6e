import { HttpLayerRouter, HttpServerResponse } from "@effect/platform"

/**
 * Herald's icon: a white H on the console's blue, as SVG. Browsers ask every origin for
 * /favicon.ico, whatever page they show (the docs, the playground, a JSON answer); an SVG served
 * with its own media type there is understood by every current browser.
 */
export const FAVICON_SVG = [
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">`,
  `<rect width="32" height="32" rx="6" fill="#1d4ed8"/>`,
  `<path d="M9 7h4v7h6V7h4v18h-4v-7h-6v7H9z" fill="#fff"/>`,
  `</svg>`
].join("")

/** GET /favicon.ico: the icon (instead of a 404 in every browser's console), cached for a day. */
export const FaviconRoute = HttpLayerRouter.add(
  "GET",
  "/favicon.ico",
  HttpServerResponse.text(FAVICON_SVG, {
    contentType: "image/svg+xml",
    headers: { "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" }
  })
)
