import {
  HttpApi,
  HttpApiBuilder,
  type HttpApiEndpoint,
  type HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpLayerRouter,
  HttpRouter,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Cause, Chunk, Context, Effect, Either, Layer, Option, type ParseResult, Schema, type SchemaAST } from "effect"
import { describeParseError } from "../../domain/plainIssues.ts"
import { DecodeErrorResponse, errorEnvelope } from "../errors.ts"
import { IDEMPOTENT_ROUTES, withIdempotencyKey } from "../idempotency/idempotentRoutes.ts"

/**
 * HttpApi endpoints served without HttpApiBuilder's per-request machinery (docs/http.md). The API
 * is still declared once with HttpApi (schemas, OpenAPI, docs) and implemented with the same
 * `handlers.handle(...)` builders; `apiGroup` is HttpApiBuilder.group with one addition, it keeps
 * the handlers it built, and `serveApi` compiles each endpoint once: its schemas to synchronous
 * decoders and encoders, its security middleware, and the context its handlers were built in.
 * Per request that leaves the middleware, the decoding, the handler and the encoding: the stock
 * route merged two large contexts per request, provided each middleware's service with a context
 * copy, and decoded and encoded through Effects.
 */

interface HandlerItem {
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  readonly handler: (request: any) => Effect.Effect<any, any, any>
  readonly withFullRequest: boolean
  readonly uninterruptible: boolean
}

interface BuiltGroup {
  readonly group: HttpApiGroup.HttpApiGroup.AnyWithProps
  readonly items: ReadonlyArray<HandlerItem>
  readonly context: Context.Context<never>
}

/** Groups built by `apiGroup`, by the HttpApiBuilder router service they were built under. */
const builtGroups = new WeakMap<object, Array<BuiltGroup>>()

/** HttpApiBuilder.group, keeping what it built for `serveApi`. */
export const apiGroup: typeof HttpApiBuilder.group = ((api: any, groupName: string, build: (handlers: any) => any) =>
  (HttpApiBuilder.group as any)(api, groupName, (handlers: any) => {
    const result = build(handlers)
    return Effect.gen(function*() {
      const built = Effect.isEffect(result) ? yield* (result as Effect.Effect<any>) : result
      const router = yield* HttpApiBuilder.Router
      const context = yield* Effect.context<never>()
      let groups = builtGroups.get(router)
      if (groups === undefined) builtGroups.set(router, groups = [])
      groups.push({ group: api.groups[groupName], items: Chunk.toReadonlyArray(built.handlers) as ReadonlyArray<HandlerItem>, context })
      return built
    })
  })) as any

/** The context a route's handler runs in, beside the request's services (NodeAdapter.ts). */
export const routeContextOf = (route: HttpLayerRouter.Route<any, any>): Context.Context<never> | undefined =>
  (route as unknown as { readonly handlerContext?: Context.Context<never> }).handlerContext

/**
 * A service a middleware provides, added to the request's own context: the lean adapter gives each
 * request a fresh context map, so this is the one `provideService` that does not copy it.
 */
const provideToRequest = (key: string) => (value: unknown) =>
  Effect.withFiberRuntime<void>((fiber) => {
    fiber.currentContext.unsafeMap.set(key, value)
    return Effect.void
  })

type Middleware = Effect.Effect<void, unknown, any>

const compileMiddleware = (tag: HttpApiMiddleware.TagClassAny, implementation: any): Middleware => {
  let run: Effect.Effect<unknown, unknown, any>
  if (HttpApiMiddleware.isSecurity(tag)) {
    let chained: Effect.Effect<unknown, unknown, any> | undefined
    for (const [key, security] of Object.entries(tag.security)) {
      const attempt = Effect.flatMap(HttpApiBuilder.securityDecode(security), implementation[key])
      chained = chained === undefined ? attempt : Effect.catchAll(chained, () => attempt)
    }
    run = chained ?? Effect.void
  } else {
    run = implementation
  }
  const provided = tag.provides === undefined ? Effect.asVoid(run) : Effect.flatMap(run, provideToRequest(tag.provides.key))
  return tag.optional ? Effect.catchAll(provided, () => Effect.void) : provided
}

type Decoder = (input: unknown) => Either.Either<unknown, ParseResult.ParseError>

const decoderOf = (schema: Option.Option<Schema.Schema.Any>): Decoder | undefined =>
  Option.isSome(schema) ? Schema.decodeUnknownEither(schema.value as Schema.Schema<unknown, unknown>) : undefined

/** How a success value becomes a response: one per member of the endpoint's success union. */
const successEncoder = (schema: Schema.Schema.Any) => {
  const members = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(members, schema)
  const encoders = [...members].map((member) => {
    const ast = member.ast as SchemaAST.AST
    const status = HttpApiSchema.getStatusSuccessAST(ast)
    const isVoid = HttpApiSchema.isVoid(ast)
    const encoding = HttpApiSchema.getEncoding(ast)
    const is = Schema.is(Schema.typeSchema(member as Schema.Schema<unknown, unknown>))
    const encode = Schema.encodeSync(member as Schema.Schema<unknown, unknown>)
    const respond = (value: unknown): HttpServerResponse.HttpServerResponse => {
      if (isVoid) return HttpServerResponse.empty({ status })
      const data = encode(value)
      switch (encoding.kind) {
        case "Json":
          return HttpServerResponse.unsafeJson(data, { status, contentType: encoding.contentType })
        case "Text":
          return HttpServerResponse.text(data as string, { status, contentType: encoding.contentType })
        case "Uint8Array":
          return HttpServerResponse.uint8Array(data as Uint8Array, { status, contentType: encoding.contentType })
        case "UrlParams":
          return HttpServerResponse.urlParams(data as any, { status, contentType: encoding.contentType })
      }
    }
    return { is, respond }
  })
  if (encoders.length === 1) return encoders[0]!.respond
  return (value: unknown) => (encoders.find((e) => e.is(value)) ?? encoders[0]!).respond(value)
}

// Exported by HttpApiBuilder's module but left out of its typings: a query key the schema takes as
// an array gets a single value wrapped in one.
const normalizeUrlParams = (HttpApiBuilder as unknown as {
  readonly normalizeUrlParams: (params: Record<string, string | Array<string>>, ast: SchemaAST.AST) => Record<string, string | Array<string>>
}).normalizeUrlParams

const encodeDecodeError = Schema.encodeSync(DecodeErrorResponse)

// Schema's own messages ("Expected undefined, actual …") rewritten as sentences naming the field.
const decodeFailure = (error: ParseResult.ParseError) => {
  const { message, errors } = describeParseError(error)
  return Effect.fail(new HttpApiDecodeError({ message, issues: errors.map((e) => ({ _tag: "Type" as const, path: e.path === "" ? [] : [e.path], message: e.message })) }))
}

/**
 * An endpoint's handler as one Effect, built once: middleware (last declared first, as HttpApi runs
 * them), then the path, payload, headers and query decoded in HttpApi's order, the handler, and the
 * answer encoded. Its failures become the envelopes their schemas declare.
 */
const compileEndpoint = (item: HandlerItem, middlewares: ReadonlyArray<Middleware>, encodeOther: (error: unknown) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) => {
  const { endpoint } = item
  const decodePath = decoderOf(endpoint.pathSchema)
  const decodePayload = item.withFullRequest ? undefined : decoderOf(endpoint.payloadSchema)
  const decodeHeaders = decoderOf(endpoint.headersSchema)
  const decodeUrlParams = decoderOf(endpoint.urlParamsSchema)
  const urlParamsAst = Option.getOrUndefined(endpoint.urlParamsSchema)?.ast
  const respond = successEncoder(endpoint.successSchema)
  const payloadFromQuery = endpoint.method === "GET" || endpoint.method === "HEAD" || endpoint.method === "OPTIONS"

  const decodeInputs = Effect.gen(function*() {
    const context = (yield* Effect.context<never>()).unsafeMap
    const request = context.get(HttpServerRequest.HttpServerRequest.key) as HttpServerRequest.HttpServerRequest
    const search = context.get(HttpServerRequest.ParsedSearchParams.key) as Record<string, string | Array<string>>
    const input: Record<string, unknown> = { request }
    if (decodePath !== undefined) {
      const route = context.get(HttpRouter.RouteContext.key) as HttpRouter.RouteContext
      const path = decodePath(route.params)
      if (Either.isLeft(path)) return yield* decodeFailure(path.left)
      input.path = path.right
    }
    if (decodePayload !== undefined) {
      const raw = payloadFromQuery ? search : yield* Effect.orDie(request.json)
      const payload = decodePayload(raw)
      if (Either.isLeft(payload)) return yield* decodeFailure(payload.left)
      input.payload = payload.right
    }
    if (decodeHeaders !== undefined) {
      const headers = decodeHeaders(request.headers)
      if (Either.isLeft(headers)) return yield* decodeFailure(headers.left)
      input.headers = headers.right
    }
    if (decodeUrlParams !== undefined) {
      const urlParams = decodeUrlParams(normalizeUrlParams(search, urlParamsAst!))
      if (Either.isLeft(urlParams)) return yield* decodeFailure(urlParams.left)
      input.urlParams = urlParams.right
    }
    return input
  })

  // As HttpApi does, the failure or, failing that, the defect is answered with the schema it
  // matches (a service that dies with a domain error still gets its status); anything else stays
  // a defect for the edge (500, logged).
  const answered = (program: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, any>) =>
    Effect.catchAllCause(program, (cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      const error = Cause.squash(cause)
      const known = typeof error === "object" && error !== null ? errorEnvelope(error as { readonly _tag: string }) : undefined
      if (known !== undefined) return Effect.succeed(known)
      if (error instanceof HttpApiDecodeError) return Effect.succeed(HttpServerResponse.unsafeJson(encodeDecodeError(error), { status: 400 }))
      return Effect.catchAllCause(encodeOther(error), () => Effect.failCause(cause))
    })
  let program: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, any> = Effect.flatMap(decodeInputs, (input) =>
    Effect.map(item.handler(input), (out) => (HttpServerResponse.isServerResponse(out) ? out : respond(out))))
  // Under an Idempotency-Key the answer itself is kept, error envelopes included, so the route's
  // failures are answered inside it; authentication and the route's role check run first, outside it.
  const route = `${endpoint.method} ${endpoint.path}`
  if (IDEMPOTENT_ROUTES.has(route)) program = withIdempotencyKey(route, answered(program))
  for (const middleware of middlewares) program = Effect.zipRight(middleware, program)
  return answered(program)
}

/**
 * Serves the endpoints of `api` implemented by `apiGroup` layers (provided to this layer): each
 * compiled once and added to the node's route table, with the context its group was built in.
 */
export const serveApi = (api: HttpApi.HttpApi.Any): Layer.Layer<never, never, HttpLayerRouter.HttpRouter> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const props = api as unknown as HttpApi.HttpApi.AnyWithProps
    if (props.middlewares.size > 0) return yield* Effect.dieMessage("API-level middleware is not supported by serveApi")
    const routerService = yield* HttpApiBuilder.Router
    const router = yield* HttpLayerRouter.HttpRouter
    const serving = new Set<string>()
    for (const group of Object.values(props.groups)) {
      for (const endpoint of Object.values(group.endpoints)) serving.add(`${endpoint.method} ${endpoint.path}`)
    }
    // Errors an endpoint declares but `errorEnvelope` does not know are encoded as HttpApi would.
    const apiMiddleware = yield* HttpApiBuilder.buildMiddleware(props as unknown as HttpApi.HttpApi<string, HttpApiGroup.HttpApiGroup.Any>)
    const encodeOther = (error: unknown) => apiMiddleware(Effect.fail(error) as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>)
    const routes: Array<HttpLayerRouter.Route<any, any>> = []
    const groups = builtGroups.get(routerService)
    if (groups === undefined) return yield* Effect.dieMessage("serveApi found no groups: provide the apiGroup layers to it")
    for (const built of groups) {
      const middlewareOf = (tag: HttpApiMiddleware.TagClassAny) => compileMiddleware(tag, Context.unsafeGet(built.context, tag as any))
      for (const item of built.items) {
        const { endpoint } = item
        if (!serving.has(`${endpoint.method} ${endpoint.path}`)) continue
        const tags = new Map<string, HttpApiMiddleware.TagClassAny>()
        for (const tag of built.group.middlewares) tags.set(tag.key, tag as HttpApiMiddleware.TagClassAny)
        for (const tag of endpoint.middlewares as ReadonlySet<HttpApiMiddleware.TagClassAny>) tags.set(tag.key, tag as HttpApiMiddleware.TagClassAny)
        const middlewares = [...tags.values()].map(middlewareOf)
        routes.push(HttpLayerRouter.route(endpoint.method as "GET", endpoint.path as HttpRouter.PathInput, compileEndpoint(item, middlewares, encodeOther), {
          uninterruptible: item.uninterruptible,
          handlerContext: built.context
        } as any))
      }
    }
    yield* router.addAll(routes)
  })).pipe(Layer.provide(HttpApiBuilder.Router.Live)) as Layer.Layer<never, never, HttpLayerRouter.HttpRouter>
