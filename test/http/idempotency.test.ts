import { HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer } from "effect"
import { Idempotency } from "../../src/http/idempotency/Idempotency.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

// A request that happened must never run again under its key because its answer could not be
// stored (docs/idempotency.md). A cluster fault test found a send answered 503 after it was sent:
// storing the answer failed while Postgres was away, the failure became the answer, the key stayed
// "running" until its lease lapsed, and the client's retry sent the message a second time. Here the
// key's row refuses to be settled (a trigger, standing in for a database that is away) while the
// first request finishes.

const Env = Idempotency.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive)))),
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

layer(Env, { timeout: 120_000, excludeTestServices: true })("idempotency keys", (it) => {
  it.effect("an answer that cannot be stored yet still goes out, and a retry waits for it instead of running the request again", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE settle_blocked (blocked boolean NOT NULL)`
      yield* sql`INSERT INTO settle_blocked VALUES (true)`
      yield* sql.unsafe(`
        CREATE FUNCTION refuse_settle() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.state = 'done' AND (SELECT blocked FROM settle_blocked) THEN RAISE EXCEPTION 'the database is away'; END IF;
          RETURN NEW;
        END $$`)
      yield* sql`CREATE TRIGGER refuse_settle BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION refuse_settle()`

      const idempotency = yield* Idempotency
      let runs = 0
      const send = Effect.sync(() => {
        runs++
        return HttpServerResponse.unsafeJson({ success: true, message_id: `m-${runs}` })
      })
      const first = yield* idempotency.run("account-1", "key-1", "POST /send {}", send)
      expect(first.status).toBe(200)
      expect(runs).toBe(1)

      // The client retries (it did not trust the answer, or never saw it) while the answer is
      // still unstored: it waits, and once the database takes the answer it gets the same one.
      const retry = yield* Effect.fork(idempotency.run("account-1", "key-1", "POST /send {}", send))
      yield* Effect.sleep(Duration.seconds(1))
      expect(retry.unsafePoll()).toBeNull()
      yield* sql`UPDATE settle_blocked SET blocked = false`
      const again = yield* Fiber.join(retry)
      expect(runs).toBe(1)
      expect(again.status).toBe(200)
      expect(again.headers["idempotent-replayed"]).toBe("true")
    }))
})
