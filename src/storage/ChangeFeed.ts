import { Duration, Effect, Option, Redacted } from "effect"
import Pg from "pg"
import { AppConfig } from "../config/AppConfig.ts"

export const CHANGES_CHANNEL = "herald_changes"

export type ChangeListener = (table: string, accountId: string) => void


/**
 * Postgres LISTEN on the change feed (migration 0006): tells this node's caches which account's
 * cached rows changed, whoever changed them. A cache may only serve what it loaded while the feed
 * was listening without a break: `epoch` moves on every disconnect and every (re)connect, so an
 * entry loaded in an earlier epoch (when notifications could have been missed) is never served,
 * and while the feed is down every read goes to the database.
 */
export class ChangeFeed extends Effect.Service<ChangeFeed>()("herald/ChangeFeed", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const listeners = new Set<ChangeListener>()
    const state = { live: false, epoch: 0 }

    const tell = (table: string, accountId: string) => {
      for (const listener of listeners) listener(table, accountId)
    }

    const broken = () => {
      if (!state.live) return
      state.live = false
      state.epoch++
    }

    // One connection's life: connect, LISTEN, then wait until it breaks.
    const session = Effect.acquireUseRelease(
      Effect.tryPromise(async () => {
        const client = new Pg.Client({ connectionString: Redacted.value(Option.getOrElse(config.dbListenUrl, () => config.databaseUrl)), application_name: `herald-${config.nodeId}-changes` })
        client.on("error", () => {})
        await client.connect().catch(async (error) => {
          await client.end().catch(() => {})
          throw error
        })
        return client
      }),
      (client) =>
        Effect.async<void, Error>((resume) => {
          const fail = (error?: Error) => {
            broken()
            resume(Effect.fail(error ?? new Error("change feed connection ended")))
          }
          client.on("error", fail)
          client.on("end", () => fail())
          client.on("notification", (message) => {
            if (message.channel !== CHANGES_CHANNEL || message.payload === undefined) return
            const at = message.payload.indexOf(":")
            tell(message.payload.slice(0, at), message.payload.slice(at + 1))
          })
          client.query(`LISTEN ${CHANGES_CHANNEL}`).then(
            () => {
              state.epoch++
              state.live = true
            },
            fail
          )
        }),
      (client) => Effect.promise(() => client.end().catch(() => {})).pipe(Effect.timeoutOption(Duration.seconds(1)))
    )

    yield* session.pipe(
      Effect.tapError((error) => Effect.logDebug("change feed interrupted", { reason: error.message })),
      Effect.catchAll(() => Effect.sleep(Duration.millis(500))),
      Effect.forever,
      Effect.ensuring(Effect.sync(broken)),
      Effect.forkScoped
    )

    return {
      /** Whether caches may serve entries of the current epoch. */
      isLive: () => state.live,
      epoch: () => state.epoch,
      /**
       * A change this node just committed: its own caches forget at once, without waiting for the
       * notification (which still comes, and tells every other node).
       */
      committed: (table: string, accountId: string) => Effect.sync(() => tell(table, accountId)),
      subscribe: (listener: ChangeListener) =>
        Effect.acquireRelease(Effect.sync(() => listeners.add(listener)), () => Effect.sync(() => listeners.delete(listener)))
    } as const
  })
}) {}
