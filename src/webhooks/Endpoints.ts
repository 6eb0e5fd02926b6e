import { Effect } from "effect"
import { SecretBox } from "../crypto/SecretBox.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { makeReadCache } from "../storage/ReadCache.ts"
import { WebhooksRepo } from "./WebhooksRepo.ts"

/** What sending to an endpoint needs. */
export interface Endpoint {
  readonly webhookId: string
  readonly accountId: string
  readonly url: string
  readonly secret: string
  /**
   * The secret a rotation replaced, and until when (epoch ms) it still signs alongside `secret`;
   * null when the endpoint was never rotated. The expiry is compared with each attempt's time:
   * it passes without any write, so the cache never learns of it.
   */
  readonly previousSecret: string | null
  readonly previousSecretUntil: number | null
  /** Not deleted and active: deliveries to it go ahead. */
  readonly live: boolean
}

/**
 * Endpoints as delivery workers read them for every attempt, kept in memory and dropped by the
 * change feed when the endpoint changes (URL, secret or its rotation, active, deleted), so an
 * attempt always goes where the endpoint points now, signed with the secrets it has now.
 */
export class Endpoints extends Effect.Service<Endpoints>()("herald/webhooks/Endpoints", {
  scoped: Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const box = yield* SecretBox
    const cache = yield* makeReadCache<Endpoint>({ tables: ["webhooks", "accounts"], capacity: 100_000 })
    const find = (webhookId: string) =>
      cache.get(
        webhookId,
        () => Effect.flatMap(
          repo.sending(webhookId),
          // Stored sealed (SecretBox); opened once per cache fill, not per attempt.
          (row) =>
            row === undefined ? Effect.succeed(undefined) : Effect.gen(function*() {
              const secret = yield* box.revealOrDie(row.secret, "webhook signing secret")
              const previousSecret = row.previousSecret === null ? null : yield* box.revealOrDie(row.previousSecret, "webhook's previous signing secret")
              return { accountId: row.accountId, value: { ...row, secret, previousSecret } }
            })
        )
      )
    return { find } as const
  }),
  dependencies: [ChangeFeed.Default, SecretBox.Default, WebhooksRepo.Default]
}) {}
