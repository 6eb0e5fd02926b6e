import { expect, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import type { Email } from "../../src/domain/identity.ts"
import { SecretKeys } from "../../src/security/SecretKeys.ts"
import { AccountsRepo } from "../../src/accounts/AccountsRepo.ts"
import { ChangeFeed } from "../../src/storage/ChangeFeed.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"
import { signedIn } from "../support/principals.ts"

const Env = Layer.mergeAll(SecretKeys.Default, AccountsRepo.Default, Storage.Default).pipe(
  Layer.provide(ChangeFeed.Default),
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)


layer(Env, { timeout: 60_000, excludeTestServices: true })("secret keys", (it) => {
  it.effect("shown once, stored hashed, accepted raw or as Basic base64 of `key:`; regenerating invalidates the old one", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const { accountId } = yield* (yield* AccountsRepo).createWithOwner({ email: "sk@example.com" as Email, passwordHash: "x", label: "SK", plan: "growth" })
      const keys = yield* SecretKeys
      const first = yield* keys.generate(signedIn(accountId))
      expect(first.secretKey).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/)
      expect((yield* keys.authenticate(first.secretKey)).accountId).toBe(accountId)
      expect((yield* keys.authenticate(Buffer.from(`${first.secretKey}:`).toString("base64"))).accountId).toBe(accountId)
      const second = yield* keys.generate(signedIn(accountId))
      expect(Either.isLeft(yield* Effect.either(keys.authenticate(first.secretKey)))).toBe(true)
      expect((yield* keys.authenticate(second.secretKey)).accountId).toBe(accountId)
      const operator = yield* Effect.either(keys.generate(signedIn(accountId, "operator")))
      expect(Either.isLeft(operator) && operator.left._tag).toBe("Forbidden")
      expect(Either.isLeft(yield* Effect.either(keys.authenticate("sk_live_nope")))).toBe(true)
    }))
})
