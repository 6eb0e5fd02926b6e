import type { HttpServerResponse } from "@effect/platform"
import { Context, type Effect } from "effect"
import type { IncomingMessage } from "node:http"

/**
 * A request seen before its route is matched, for the paths under `prefix`: the rewrite may
 * answer it (a response), or change its URL and headers and let it go on (undefined), so that it
 * is served by another route as if it had been sent there. The console's calls to the REST API go
 * through one (src/console/ConsoleGate.ts).
 */
export interface RequestRewrite {
  readonly prefix: string
  readonly rewrite: (req: IncomingMessage) => Effect.Effect<HttpServerResponse.HttpServerResponse | undefined>
}

export class RequestRewrites extends Context.Tag("herald/http/RequestRewrites")<RequestRewrites, ReadonlyArray<RequestRewrite>>() {}
