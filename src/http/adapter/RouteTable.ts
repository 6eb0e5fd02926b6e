import { HttpLayerRouter } from "@effect/platform"
import { Context, Effect, Layer } from "effect"

export type Route = HttpLayerRouter.Route<any, any>

export interface RouteMatch {
  readonly route: Route
  readonly params: Readonly<Record<string, string | undefined>>
  readonly searchParams: Readonly<Record<string, string | Array<string>>>
}

/**
 * Every route of a node, compiled once into one find-my-way table. Routes are still declared where
 * they were: HttpApi groups through `HttpLayerRouter.addHttpApi` (so OpenAPI and the docs come from
 * the same declaration), and the few raw routes through `HttpLayerRouter.add`/`use`. This module
 * stands in for the platform's router service so that those declarations register here; the lean
 * adapter (NodeAdapter.ts) then dispatches to a route's handler directly, without the platform's
 * per-request context copying, router and middleware chain.
 */
export class RouteTable extends Context.Tag("herald/http/RouteTable")<RouteTable, {
  readonly find: (method: string, url: string) => RouteMatch | undefined
  /** The methods some route takes at `url`, for a 405's `Allow` (empty: no route at that path). */
  readonly allowed: (url: string) => ReadonlyArray<string>
}>() {}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const

const unsupported = (what: string) => Effect.dieMessage(`the lean HTTP adapter does not support ${what}; do it at the edge (NodeAdapter.ts)`)

/**
 * The route table and the router service that fills it. Route-level and global platform
 * middleware are refused loudly rather than silently skipped: Herald's per-request duties run once
 * at the edge instead. A new layer on every call: layers are shared by reference in one graph, and
 * each listener (the API's, METRICS_PORT's) has a table of its own.
 */
export const routeTableLayer = (): Layer.Layer<RouteTable | HttpLayerRouter.HttpRouter> => Layer.effectContext(Effect.sync(() => {
  const table = HttpLayerRouter.FindMyWay.make<Route>({})
  const addAll = (routes: ReadonlyArray<Route>) =>
    Effect.contextWith((context: Context.Context<never>) => {
      // Route middleware is kept in the context under this key by `HttpLayerRouter.middleware(...).layer`.
      for (const key of context.unsafeMap.keys()) {
        if (key.startsWith("@effect/platform/HttpLayerRouter/Middleware-")) throw new Error(`route middleware (${key}) is not supported by the lean adapter`)
      }
      for (const route of routes) {
        if (route.method === "*") table.all(route.path, route)
        else table.on(route.method, route.path, route)
      }
    })
  const router: HttpLayerRouter.HttpRouter = HttpLayerRouter.HttpRouter.of({
    [HttpLayerRouter.TypeId]: HttpLayerRouter.TypeId,
    prefixed: () => {
      throw new Error("prefixed routers are not supported by the lean adapter")
    },
    addAll,
    add: (method, path, handler, options) => addAll([HttpLayerRouter.route(method, path, handler as any, options)]),
    addGlobalMiddleware: () => unsupported("global platform middleware"),
    asHttpEffect: () => {
      throw new Error("the lean adapter serves the route table itself")
    }
  } as HttpLayerRouter.HttpRouter)
  const find = (method: string, url: string): RouteMatch | undefined => {
    const found = table.find(method, url) ?? (method === "HEAD" ? table.find("GET", url) : undefined)
    return found === undefined ? undefined : { route: found.handler, params: found.params, searchParams: found.searchParams }
  }
  const allowed = (url: string) => METHODS.filter((method) => find(method, url) !== undefined)
  return Context.make(RouteTable, { find, allowed }).pipe(Context.add(HttpLayerRouter.HttpRouter, router))
}))
