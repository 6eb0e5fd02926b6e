import { HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Exit, Fiber, FiberSet, Schedule, Stream } from "effect"
import { createHash } from "node:crypto"
import { SecretBox } from "../../crypto/SecretBox.ts"
import { envelope } from "../errors.ts"
import { IdempotencyKeysRepo, type StoredRow } from "./IdempotencyKeysRepo.ts"

/**
 * `Idempotency-Key` on the writes a client may need to retry (docs/idempotency.md), with Stripe's
 * semantics: the same key and the same request within 24 hours get the first answer again; the
 * same key with a different request is 422 `idempotency_key_reused`; a duplicate that arrives while
 * the first is still running waits for its answer. Keys are per principal within an account (the
 * caller's `scope`: idempotentRoutes.ts), answers are stored sealed, and the row in Postgres makes
 * this hold across API nodes.
 */

export const IDEMPOTENCY_HEADER = "idempotency-key"


export const REPLAYED_HEADER = "idempotent-replayed"
export const KEY_TTL = Duration.hours(24)

/** A running request's claim on its key; renewed while it runs, taken over when its node died. */
const LEASE = Duration.seconds(30)
const RENEW_EVERY = Duration.seconds(10)
/** How often a duplicate looks for the first request's answer, and for how long at most. */
const POLL_EVERY = Duration.millis(50)
const WAIT_AT_MOST = Duration.minutes(2)

const KEY = /^[\x21-\x7e]{1,255}$/

/** Storing an answer is tried for a few seconds before the answer goes out. */
const storeBriefly = Schedule.exponential(Duration.millis(100), 2).pipe(Schedule.upTo(Duration.seconds(3)))
/** Then, in the background, every 2 s for as long as the key lives. */
const storeLater = Schedule.spaced(Duration.seconds(2)).pipe(Schedule.upTo(KEY_TTL))

/** What a request's key header says: none, a usable key, or a 400. */
export const readKey = (
  header: string | ReadonlyArray<string> | undefined
): { readonly _tag: "None" } | { readonly _tag: "Key"; readonly key: string } | { readonly _tag: "Invalid"; readonly response: HttpServerResponse.HttpServerResponse } => {
  if (header === undefined) return { _tag: "None" }
  if (typeof header !== "string" || !KEY.test(header)) {
    return {
      _tag: "Invalid",
      response: envelope(400, "invalid_request", "Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good key)", {
        errors: [{ path: "Idempotency-Key", message: "must be 1 to 255 visible ASCII characters" }]
      })
    }
  }
  return { _tag: "Key", key: header }
}

/**
 * Whether an answer is kept for replays. A 2xx and the refusals that the request itself decided
 * (402, 403, 404, 409, 422) are; not a 400 (the request was not run: fixing the body and retrying
 * with the same key must work), nor 408, 413, 415 or 429 (about the transfer or the moment), nor a
 * 5xx (the request may not have happened: a retry must run it).
 */
const kept = (status: number) => (status >= 200 && status < 300) || [402, 403, 404, 409, 422].includes(status)

const reused = () =>
  envelope(422, "idempotency_key_reused", "this Idempotency-Key was used with a different request in the last 24 hours; use a new key for a new request")

const stillRunning = () =>
  HttpServerResponse.setHeader(
    envelope(409, "idempotency_key_in_use", "a request with this Idempotency-Key is still running; retry later to get its answer"),
    "retry-after",
    "5"
  )

const unfinished = () =>
  HttpServerResponse.setHeader(
    envelope(409, "idempotency_key_in_use", "the first request with this Idempotency-Key did not finish; send this request again"),
    "retry-after",
    "1"
  )

const unreadable = () =>
  envelope(409, "idempotency_answer_unreadable",
    "the first answer to this Idempotency-Key was sealed under another HERALD_SECRETS_KEY and cannot be shown again; send the request with a new key")

const bodyOf = (response: HttpServerResponse.HttpServerResponse): Uint8Array | undefined => {
  switch (response.body._tag) {
    case "Uint8Array":
      return response.body.body
    case "Empty":
      return new Uint8Array()
    default:
      return undefined
  }
}

const SWEEP_EVERY = Duration.minutes(10)

export class Idempotency extends Effect.Service<Idempotency>()("herald/Idempotency", {
  scoped: Effect.gen(function*() {
    const repo = yield* IdempotencyKeysRepo
    const box = yield* SecretBox
    /** Answers still being stored while the database is away, for as long as the service lives. */
    const keeping = yield* FiberSet.make()

    const claim = (scope: string, key: string, fingerprint: string) => repo.claim(scope, key, fingerprint, LEASE, KEY_TTL)
    const read = repo.read
    const renew = (scope: string, key: string) => repo.renew(scope, key, LEASE)
    const release = repo.release

    const settle = (scope: string, key: string, response: HttpServerResponse.HttpServerResponse) => {
      const body = bodyOf(response)
      if (!kept(response.status) || body === undefined) return release(scope, key)
      const contentType = response.body._tag === "Uint8Array" ? response.body.contentType : null
      return repo.settle(scope, key, { status: response.status, contentType, sealedBody: seal(body) })
    }

    // Every stored answer is sealed (AES-256-GCM under HERALD_SECRETS_KEY, SecretBox): those of key
    // creations hold the raw key, and a replay must be able to show it again (Stripe's rule: the
    // same answer), yet a reader of the table must not. The bytes go through latin1, which maps
    // each byte to one character and back, so any body survives the string SecretBox seals.
    const seal = (body: Uint8Array) => Buffer.from(box.seal(Buffer.from(body).toString("latin1")))
    const unseal = (sealed: Uint8Array) => {
      const plain = box.open(Buffer.from(sealed).toString())
      return plain === undefined ? undefined : Buffer.from(plain, "latin1")
    }
    const replay = (row: StoredRow) => {
      const body = row.body === null ? new Uint8Array() : row.sealed ? unseal(row.body) : row.body
      if (body === undefined) return unreadable()
      return HttpServerResponse.uint8Array(body, {
        status: row.status!,
        contentType: row.contentType ?? "application/json",
        headers: { [REPLAYED_HEADER]: "true" }
      })
    }

    /**
     * Runs `program` as the owner of the key: its lease renewed meanwhile, its answer kept. A
     * streamed request's fingerprint is known only at its end: `finalFingerprint` gives it then,
     * or undefined when the body was not read to its end (the answer is then not kept).
     */
    const own = <E, R>(
      scope: string,
      key: string,
      program: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
      finalFingerprint?: () => string | undefined
    ) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          // Forked interruptible: a fiber forked here would inherit the mask and never stop.
          const renewing = yield* Effect.fork(Effect.interruptible(
            Effect.repeat(Effect.ignore(renew(scope, key)), Schedule.spaced(RENEW_EVERY)).pipe(Effect.delay(RENEW_EVERY))
          ))
          const exit = yield* Effect.exit(restore(program))
          yield* Fiber.interrupt(renewing)
          // The answer is kept before it is sent: a duplicate that reads the row after this sees it.
          const fingerprint = finalFingerprint?.()
          const store = Exit.match(exit, {
            onSuccess: (response) =>
              finalFingerprint === undefined
                ? settle(scope, key, response)
                : fingerprint === undefined
                ? release(scope, key)
                : Effect.zipRight(repo.setFingerprint(scope, key, fingerprint), settle(scope, key, response)),
            onFailure: () => release(scope, key)
          })
          const stored = yield* Effect.either(Effect.retry(store, storeBriefly))
          if (stored._tag === "Left" && Exit.isSuccess(exit) && kept(exit.value.status)) {
            // The request happened: its answer goes out now whatever the database does, and is
            // kept once it can be, the key's claim renewed meanwhile, so a retry waits for it
            // instead of running the request again (a send answered 503 here was sent twice).
            yield* Effect.logWarning("idempotent answer not stored yet; trying until it is", { status: exit.value.status, error: stored.left.message })
            yield* FiberSet.run(keeping, Effect.retry(Effect.zipRight(Effect.ignore(renew(scope, key)), store), storeLater).pipe(Effect.ignoreLogged))
          }
          return yield* exit
        })
      )

    /**
     * `program` under the key: run once per (scope, key, request) in 24 hours. `fingerprint` stands
     * for the request (method, path and body); `scope` for whose keys these are.
     */
    const run = <E, R>(scope: string, key: string, fingerprint: string, program: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) => {
      const deadline = Date.now() + Duration.toMillis(WAIT_AT_MOST)
      const attempt: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> = Effect.flatMap(claim(scope, key, fingerprint), (claimed) => {
        if (claimed) return own(scope, key, program)
        return Effect.flatMap(read(scope, key), (row) => {
          // Expired between the two statements: claim it anew.
          if (row === undefined) return attempt
          if (row.fingerprint !== fingerprint) return Effect.succeed(reused())
          if (row.state === "done") return Effect.succeed(replay(row))
          if (Date.now() > deadline) return Effect.succeed(stillRunning())
          return Effect.zipRight(Effect.sleep(POLL_EVERY), attempt)
        })
      })
      return attempt
    }

    /**
     * `run` under the key for a route that streams its body (the imports): `head` is the method and
     * URL, and the body's hash is taken as `run` reads it. The owner runs at once; a duplicate
     * reads its own body to the end (it has to be read anyway) to know whether it is the same
     * request, then waits for the owner's answer. If the owner did not finish, the duplicate's
     * body is spent: it is answered 409 to be sent again.
     */
    const runStreamed = <BE, E, R>(
      scope: string,
      key: string,
      head: string,
      body: Stream.Stream<Uint8Array, BE>,
      run: (body: Stream.Stream<Uint8Array, BE>) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
      refused: (error: BE) => HttpServerResponse.HttpServerResponse
    ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
      const pending = `pending:${head}`
      const hashed = () => {
        const hash = createHash("sha256").update(`${head}\n`)
        let complete = false
        const stream = body.pipe(
          Stream.mapChunks((chunks) => {
            for (const chunk of chunks) hash.update(chunk)
            return chunks
          }),
          Stream.onEnd(Effect.sync(() => (complete = true)))
        )
        return { stream, digest: () => (complete ? hash.digest("base64url") : undefined) }
      }
      const awaitOwner = (fingerprint: string): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
        Effect.flatMap(read(scope, key), (row) => {
          if (row === undefined) return Effect.succeed(unfinished())
          if (row.state === "running") return Effect.zipRight(Effect.sleep(POLL_EVERY), awaitOwner(fingerprint))
          return Effect.succeed(row.fingerprint === fingerprint ? replay(row) : reused())
        })
      return Effect.flatMap(claim(scope, key, pending), (claimed) => {
        if (claimed) {
          const { stream, digest } = hashed()
          return own(scope, key, run(stream), digest)
        }
        const { stream, digest } = hashed()
        return Effect.matchEffect(Stream.runDrain(stream), {
          onFailure: (error) => Effect.succeed(refused(error)),
          onSuccess: () => awaitOwner(digest()!)
        })
      })
    }

    // Rows past their 24 hours, removed in bounded batches by every API node now and then.
    yield* Effect.forkScoped(Effect.repeat(Effect.ignore(repo.sweep), Schedule.spaced(SWEEP_EVERY)))
    return { run, runStreamed } as const
  }),
  dependencies: [IdempotencyKeysRepo.Default, SecretBox.Default]
}) {}
