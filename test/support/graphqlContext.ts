import { Cause, Effect, Exit, Option, Runtime } from "effect"
import { GraphqlReads } from "../../src/graphql/reads.ts"
import { type GraphqlContext, makeLoaders, type Run } from "../../src/graphql/context.ts"
import type { GraphqlServices } from "../../src/graphql/services.ts"
import type { SecretKeyAccount } from "../../src/security/SecretKeys.ts"
import { ListCursors } from "../../src/storage/ListCursors.ts"

/**
 * What the route gives the resolvers of one request (its reads, loaders and runner) for an
 * enterprise account, for tests that execute documents against the real database without a server.
 */
export const graphqlContext = (accountId: string, label: string) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const run: Run = (effect) =>
      Runtime.runPromiseExit(runtime)(effect).then((exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        throw Option.getOrElse(Cause.failureOption(exit.cause), () => Cause.squash(exit.cause))
      })
    const services = { reads: yield* GraphqlReads, cursors: yield* ListCursors } as unknown as GraphqlServices
    const account = { accountId, label, plan: "enterprise", planRatePerMinute: null } as unknown as SecretKeyAccount
    return { account, services, run, loaders: makeLoaders(account, services, run) } satisfies GraphqlContext
  })
