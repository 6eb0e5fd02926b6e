import { Args } from "@effect/cli"
import { Effect, Schema } from "effect"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { AccountNotFound, InvalidRequest } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { Email } from "../domain/identity.ts"
import { requiredArg } from "./help.ts"

/** More than one account is owned by the e-mail address an admin command was given. */
export class AmbiguousAccount extends Schema.TaggedError<AmbiguousAccount>()("AmbiguousAccount", {
  message: Schema.String,
  accountIds: Schema.Array(Schema.String)
}) {}

/** The ACCOUNT argument of every admin command that acts on an account. */
export const accountArg = Args.text({ name: "ACCOUNT" }).pipe(
  Args.withDescription("the account: its id (a uuid) or its owner's e-mail address (any case)"),
  requiredArg
)

/**
 * Finds the account an operator named by its id or by its owner's e-mail address (compared in
 * lower case, as users' addresses are unique). None is AccountNotFound; several accounts owned by
 * that person are AmbiguousAccount, naming their ids; neither an id nor an address is
 * InvalidRequest. The commands print the account's id, so the operator sees which one it was.
 */
export class AccountRefs extends Effect.Service<AccountRefs>()("herald/cli/AccountRefs", {
  effect: Effect.gen(function*() {
    const accounts = yield* AccountsRepo

    const byId = (accountId: string) =>
      Effect.flatMap(accounts.idOf(accountId), (found) =>
        found === undefined ? Effect.fail(new AccountNotFound({ message: `no account ${accountId}` })) : Effect.succeed(found))

    const byOwnerEmail = (email: Email) =>
      accounts.idsOwnedBy(email).pipe(
        Effect.flatMap(Effect.fn(function*(ids) {
          if (ids.length === 1) return ids[0]!
          if (ids.length === 0) return yield* new AccountNotFound({ message: `no account is owned by ${email}` })
          return yield* new AmbiguousAccount({ message: `${ids.length} accounts are owned by ${email} (${ids.join(", ")}): name one by its id`, accountIds: ids })
        }))
      )

    /** The id of the account `ref` names: an account id or its owner's e-mail address. */
    const resolve = (ref: string) =>
      Effect.gen(function*() {
        const value = ref.trim()
        if (isUuid(value)) return yield* byId(value.toLowerCase())
        const email = yield* Schema.decode(Email)(value).pipe(
          Effect.mapError(() => InvalidRequest.single("ACCOUNT", `must be an account id (uuid) or its owner's e-mail address (got ${JSON.stringify(ref)})`))
        )
        return yield* byOwnerEmail(email)
      }).pipe(Effect.withSpan("AccountRefs.resolve"))

    return { resolve } as const
  }),
  dependencies: [AccountsRepo.Default]
}) {}
