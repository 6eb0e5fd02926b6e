import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest, NodeStream } from "@effect/platform-node"
import { Duration, Effect, Stream } from "effect"
import type { IncomingMessage } from "node:http"
import { ContactLists } from "../../contacts/ContactLists.ts"
import type { Upload } from "../../contacts/Imports.ts"
import { ImportTooLarge, UploadInterrupted, UploadStalled } from "../../contacts/errors.ts"
import { IMPORT_MAX_BYTES } from "../../contacts/importLimits.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { mayWrite } from "../../domain/access.ts"
import { RcsCredentials } from "../Authentication.ts"
import { discardRest } from "../requestBody.ts"
import { errorEnvelope } from "../errors.ts"
import { IDEMPOTENCY_HEADER, Idempotency, readKey } from "../idempotency/Idempotency.ts"
import { principalScope } from "../idempotency/idempotentRoutes.ts"
// Registers the envelopes of the import's errors (status and code) for `errorEnvelope`.
import "./ContactListsApi.ts"
import { presentImportReport } from "../importReport.ts"

export const CONTACT_IMPORT_PATH = "/api/v1/rcs/contact-lists/:list_id/contacts"

/**
 * The request body as a stream of bytes, read straight from Node's request as the import pulls
 * it (so the socket is paused while a batch is written), failing once it passes IMPORT_MAX_BYTES
 * (declared or counted) or if the client goes away before its end. The request is never
 * destroyed here: whoever answers decides what happens to the unread rest (see below).
 */
export const bodyOf = (source: IncomingMessage, idleMs: number): Upload["body"] =>
  Stream.suspend(() => {
    if (Number(source.headers["content-length"] ?? 0) > IMPORT_MAX_BYTES) return Stream.fail(ImportTooLarge.instance())
    let received = 0
    return NodeStream.fromReadable<UploadInterrupted, Uint8Array>(() => source, () => UploadInterrupted.instance(), { closeOnDone: false }).pipe(
      Stream.timeoutFail(() => UploadStalled.after(idleMs), Duration.millis(idleMs)),
      Stream.mapChunksEffect((chunks) => {
        for (const chunk of chunks) received += chunk.length
        return received > IMPORT_MAX_BYTES ? Effect.fail(ImportTooLarge.instance()) : Effect.succeed(chunks)
      })
    )
  })

/**
 * A streamed import's answer: its report, or the error envelope of a refusal. Refused before its
 * end (415, 413, 409, a broken body…), the rest of the body is read and dropped, so that a client
 * still writing reads the answer instead of a connection reset.
 */
export const answerImport = <A, E extends { readonly _tag: string }>(source: IncomingMessage, run: Effect.Effect<A, E>) =>
  answered(run).pipe(
    Effect.ensuring(Effect.sync(() => {
      if (!source.complete) discardRest(source)
    }))
  )

/** An import's report, or its refusal's envelope (a response the route already built as it is). */
const answered = <A, E extends { readonly _tag: string }>(run: Effect.Effect<A, E>) =>
  run.pipe(
    Effect.map((report) => (HttpServerResponse.isServerResponse(report) ? report : HttpServerResponse.unsafeJson(report))),
    Effect.catchAll((error) => {
      const answer = errorEnvelope(error)
      return answer === undefined ? Effect.die(error) : Effect.succeed(answer)
    })
  )

/**
 * An import under the request's Idempotency-Key when it carries one (docs/idempotency.md): the
 * body's hash is taken as the import reads it, and a duplicate reads its own to compare.
 * Authentication has run: `scope` is whose keys these are.
 */
export const keyedImport = <A, E extends { readonly _tag: string }>(
  idempotency: Idempotency,
  request: HttpServerRequest.HttpServerRequest,
  scope: string,
  body: Upload["body"],
  run: (body: Upload["body"]) => Effect.Effect<A, E>
): Effect.Effect<HttpServerResponse.HttpServerResponse | A, E> => {
  const key = readKey(request.headers[IDEMPOTENCY_HEADER])
  switch (key._tag) {
    case "None":
      return run(body)
    case "Invalid":
      return Effect.succeed(key.response)
    case "Key":
      return idempotency.runStreamed(scope, key.key, `${request.method} ${request.url}`, body, (hashed) => answered(run(hashed)), (error) =>
        errorEnvelope(error) ?? HttpServerResponse.empty({ status: 400 }))
  }
}

/**
 * POST /api/v1/rcs/contact-lists/{list_id}/contacts (DESIGN.md, Contact lists), served off the
 * router: HttpApi reads a whole body before the handler runs, and the middleware caps bodies at
 * 10 MB (this route is exempt there, see bodyLimit.ts). Declared in ContactImportApi for the
 * OpenAPI document and the authorization matrix. The credential is checked before a byte of the
 * body is read; the answer is the import report, or an error envelope like HttpApi's.
 */
export const ContactImportRoute = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const credentials = yield* RcsCredentials
    const lists = yield* ContactLists
    const idempotency = yield* Idempotency
    const { importIdleMs } = yield* AppConfig
    yield* router.add(
      "POST",
      CONTACT_IMPORT_PATH,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const route = yield* HttpLayerRouter.RouteContext
        const source = NodeHttpServerRequest.toIncomingMessage(request)
        return yield* answerImport(source, Effect.gen(function*() {
          const principal = yield* credentials.fromHeader(request.headers.authorization, "POST", CONTACT_IMPORT_PATH)
          // Before the key is looked at: a stored report is replayed only to whom may import now.
          yield* mayWrite.importContacts(principal)
          return yield* keyedImport(idempotency, request, principalScope(principal), bodyOf(source, importIdleMs), (body) =>
            Effect.map(lists.importContacts(principal, route.params.list_id ?? "", { contentType: request.headers["content-type"], body }), presentImportReport))
        }))
      })
    )
  })
)
