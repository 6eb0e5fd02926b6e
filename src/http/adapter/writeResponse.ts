import { Cookies, type HttpServerResponse } from "@effect/platform"
import { Effect, type Fiber, Stream } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"

type RunFork = (effect: Effect.Effect<unknown, unknown>) => Fiber.RuntimeFiber<unknown, unknown>

/**
 * Writes a response on node's ServerResponse. Bodies in memory (JSON, text: every Herald route but
 * none) go out with one `writeHead` + `end`, which node sends as one write; a streamed body is
 * piped, on a fiber of its own when it is an Effect stream.
 */
export const writeResponse = (
  req: IncomingMessage,
  res: ServerResponse,
  response: HttpServerResponse.HttpServerResponse,
  extra: Record<string, string>,
  runFork: RunFork
): void => {
  if (res.writableEnded || res.destroyed) return
  const headers: Record<string, string | Array<string>> = { ...response.headers, ...extra }
  if (!Cookies.isEmpty(response.cookies)) {
    const set = Cookies.toSetCookieHeaders(response.cookies)
    const given = response.headers["set-cookie"]
    if (given !== undefined) set.push(given)
    headers["set-cookie"] = set
  }
  res.writeHead(response.status, response.statusText, headers)
  const body = response.body
  if (req.method === "HEAD") return void res.end()
  switch (body._tag) {
    case "Empty":
      return void res.end()
    case "Uint8Array":
      return void res.end(body.body)
    case "Raw": {
      const raw = body.body as unknown
      if (raw !== null && typeof raw === "object" && typeof (raw as { pipe?: unknown }).pipe === "function") {
        return void (raw as NodeJS.ReadableStream).pipe(res)
      }
      return void res.end(raw as string | Uint8Array)
    }
    case "FormData":
      // No Herald route answers with a form; one that did would need its boundary in the head.
      return void res.destroy(new Error("FormData responses are not supported by the lean adapter"))
    case "Stream":
      runFork(
        Stream.runForEach(body.stream, (chunk) =>
          res.write(chunk) ? Effect.void : Effect.async<void>((resume) => void res.once("drain", () => resume(Effect.void)))).pipe(
            Effect.matchCause({ onSuccess: () => res.end(), onFailure: () => res.destroy() })
          )
      )
  }
}
