/**
 * Which answers carry Interakt's `result` beside Herald's `success` (docs/whatsapp.md,
 * docs/conversions.md): every answer of the public messaging API, and the conversions sent with
 * the secret key (`{result, success, id}`). The adapter adds it to their error envelopes
 * (NodeAdapter.ts); the OpenAPI document declares it there (openApiDocument.ts).
 */
const PUBLIC_PREFIX = "/api/v1/public/"
const CAPI_EVENTS = /^\/api\/v1\/app\/meta-ads\/capi\/events(?:\/batch)?\/?(?:\?|$)/

/** Whether the answer to `method` `url` (a request target, or a path of the document) carries `result`. */
export const answersResult = (method: string, url: string): boolean =>
  url.startsWith(PUBLIC_PREFIX) || (method.toUpperCase() === "POST" && CAPI_EVENTS.test(url))
