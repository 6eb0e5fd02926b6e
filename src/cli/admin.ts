import { Args, Command, Options } from "@effect/cli"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { InvalidRequest, NotFound } from "../domain/errors.ts"
import { AccountLabel, Amount, Email, Password } from "../domain/identity.ts"
import { Plan } from "../domain/plans.ts"
import { Passwords } from "../security/Passwords.ts"
import { SigningKeys } from "../security/SigningKeys.ts"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { UsersRepo } from "../accounts/UsersRepo.ts"
import { BotsRepo } from "../bots/BotsRepo.ts"
import { printJson } from "./output.ts"
import { WA_THROUGHPUT_DEFAULT, WaNumbers } from "../whatsapp/numbers/WaNumbers.ts"
import { accountArg, AccountRefs } from "./accounts.ts"
import { required, requiredArg, withDefault } from "./help.ts"
import { onDatabase } from "./oneShot.ts"
import { prepareDatabase } from "../storage/Migrations.ts"

/** Decodes one CLI input with a domain Schema; a bad value names the flag or argument. */
const parse = <A, I>(schema: Schema.Schema<A, I>, name: string, value: I) =>
  Schema.decode(schema)(value).pipe(
    Effect.mapError((error) => InvalidRequest.single(name, error.message.split("\n").at(-1)?.trim() ?? "invalid value"))
  )

/** The id of the account an ACCOUNT argument names (its id or its owner's e-mail address). */
const accountId = (ref: string) => Effect.flatMap(AccountRefs, (accounts) => accounts.resolve(ref))

const plans = Plan.literals.map((p): [string, typeof p] => [p, p])
const botArg = Args.text({ name: "BOT" }).pipe(Args.withDescription("the bot's id (a uuid)"), requiredArg)

const createAccount = Command.make(
  "create-account",
  {
    email: Options.text("email").pipe(Options.withDescription("the owner's e-mail address, with which they sign in"), required),
    password: Options.redacted("password").pipe(Options.withDescription("the owner's password: 8 to 256 characters"), required),
    label: Options.text("label").pipe(Options.withDescription("the account's name, as its team sees it"), required),
    plan: Options.choice("plan", Plan.literals).pipe(Options.withDescription("the account's plan"), withDefault<Plan>("starter"))
  },
  (input) =>
    Effect.gen(function*() {
      const email = yield* parse(Email, "--email", input.email)
      yield* parse(Password, "--password", Redacted.value(input.password))
      const label = yield* parse(AccountLabel, "--label", input.label)
      const passwordHash = yield* (yield* Passwords).hash(input.password)
      const created = yield* (yield* AccountsRepo).createWithOwner({ email, passwordHash, label, plan: input.plan })
      yield* printJson({ account_id: created.accountId, user_id: created.userId })
    })
).pipe(Command.withDescription("Create an account with its owner (prints {account_id, user_id})"))

const setPlan = Command.make(
  "set-plan",
  {
    account: accountArg,
    plan: Args.choice(plans, { name: "PLAN" }).pipe(Args.withDescription("the new plan"), requiredArg),
    rate: Options.integer("rate").pipe(
      Options.withDescription("requests per minute shared by the public API and GraphQL; enterprise plan only. When absent, the plan's own rate."),
      Options.optional
    )
  },
  (input) =>
    Effect.gen(function*() {
      const rate = Option.getOrNull(input.rate)
      if (rate !== null && (input.plan !== "enterprise" || rate < 1)) {
        return yield* InvalidRequest.single("--rate", "is a positive number and only for the enterprise plan")
      }
      const id = yield* accountId(input.account)
      const account = yield* (yield* AccountsRepo).setPlan(id, input.plan, rate)
      yield* printJson({ account_id: account.accountId, plan: account.plan, rate_per_minute: account.planRatePerMinute })
    })
).pipe(Command.withDescription("Change an account's plan"))

const walletCredit = Command.make(
  "wallet-credit",
  { account: accountArg, amount: Args.text({ name: "AMOUNT" }).pipe(Args.withDescription("the sum to add, in the account's currency (INR)"), requiredArg) },
  (input) =>
    Effect.gen(function*() {
      const amount = yield* parse(Amount, "AMOUNT", input.amount)
      const id = yield* accountId(input.account)
      const balance = yield* (yield* AccountsRepo).credit(id, amount)
      yield* printJson({ account_id: id, credited: Number(amount), balance })
    })
).pipe(Command.withDescription("Top up an account's wallet"))

const resetPassword = Command.make(
  "reset-password",
  {
    email: Args.text({ name: "EMAIL" }).pipe(Args.withDescription("the person's e-mail address (any case)"), requiredArg),
    password: Args.redacted({ name: "PASSWORD" }).pipe(Args.withDescription("the new password: 8 to 256 characters"), requiredArg)
  },
  (input) =>
    Effect.gen(function*() {
      const email = yield* parse(Email, "EMAIL", input.email)
      yield* parse(Password, "PASSWORD", Redacted.value(input.password))
      const passwordHash = yield* (yield* Passwords).hash(input.password)
      const user = yield* (yield* UsersRepo).setPassword(email, passwordHash)
      yield* printJson({ user_id: user.userId, tokens_revoked: true })
    })
).pipe(Command.withDescription("Set a new password; every token of that person stops working at once"))

const createBot = Command.make(
  "create-bot",
  {
    account: accountArg,
    name: Options.text("name").pipe(Options.withDescription("the bot's name: 1 to 100 characters"), required),
    useCase: Options.choice("use-case", ["promotional", "transactional", "otp"]).pipe(
      Options.withDescription("what the bot sends. When absent, none is recorded."),
      Options.optional
    ),
    status: Options.choice("status", ["pending", "active"]).pipe(
      Options.withDescription("the bot's first status: active skips the platform's review"),
      withDefault<"pending" | "active">("pending")
    )
  },
  (input) =>
    Effect.gen(function*() {
      const name = yield* parse(Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(100)), "--name", input.name)
      const id = yield* accountId(input.account)
      const bot = yield* (yield* BotsRepo).create({ accountId: id, name, useCase: Option.getOrNull(input.useCase), status: input.status })
      yield* printJson({ bot_id: bot.botId, account_id: bot.accountId, name: bot.name, status: bot.status, use_case: bot.useCase })
    })
).pipe(Command.withDescription("Create a bot for an account (prints {bot_id, ...})"))

const botStatus = Command.make(
  "bot-status",
  {
    bot: botArg,
    status: Args.choice([["active", "active"], ["suspended", "suspended"], ["rejected", "rejected"]] as const, { name: "STATUS" }).pipe(
      Args.withDescription("the decision"),
      requiredArg
    ),
    reason: Options.text("reason").pipe(
      Options.withDescription("why: 1 to 500 characters, kept and shown while the bot is suspended"),
      Options.optional
    )
  },
  (input) =>
    Effect.gen(function*() {
      const botId = yield* parse(Schema.UUID, "BOT", input.bot)
      const reason = Option.isSome(input.reason)
        ? yield* parse(Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(500)), "--reason", input.reason.value)
        : null
      const bot = yield* (yield* BotsRepo).setStatus(botId, input.status, reason)
      if (bot === undefined) return yield* new NotFound({ message: `no bot ${botId}` })
      yield* printJson({ bot_id: bot.botId, account_id: bot.accountId, status: bot.status, suspend_reason: bot.suspendReason })
    })
).pipe(Command.withDescription("Decide on a bot: active, suspended or rejected (--reason says why)"))

const botThroughput = Command.make(
  "bot-throughput",
  {
    bot: botArg,
    rate: Args.text({ name: "N|unlimited" }).pipe(Args.withDescription("messages per second upstream (1 to 1000000), or unlimited"), requiredArg)
  },
  (input) =>
    Effect.gen(function*() {
      const botId = yield* parse(Schema.UUID, "BOT", input.bot)
      const rate = input.rate === "unlimited"
        ? 0
        : yield* parse(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1_000_000)), "N", input.rate)
      const bot = yield* (yield* BotsRepo).setThroughput(botId, rate)
      if (bot === undefined) return yield* new NotFound({ message: `no bot ${botId}` })
      yield* printJson({ bot_id: bot.botId, throughput: rate === 0 ? "unlimited" : rate })
    })
).pipe(Command.withDescription("Set a bot's upstream throughput: N messages per second, or unlimited"))

const presentNumber = (n: { phoneNumberId: string; wabaId: string; accountId: string; phone: string; displayName: string | null; throughput: number; isDefault: boolean }) => ({
  phone_number_id: n.phoneNumberId,
  waba_id: n.wabaId,
  account_id: n.accountId,
  phone: n.phone,
  display_name: n.displayName,
  throughput: n.throughput,
  is_default: n.isDefault
})

const createWaNumber = Command.make(
  "create-wa-number",
  {
    account: accountArg,
    phone: Options.text("phone").pipe(Options.withDescription("the number, E.164 (+ and digits with the country code)"), required),
    displayName: Options.text("display-name").pipe(
      Options.withDescription("the name shown with it: 1 to 100 characters. When absent, none."),
      Options.optional
    ),
    throughput: Options.integer("throughput").pipe(
      Options.withDescription("messages per second upstream (1 to 1000000)"),
      withDefault(WA_THROUGHPUT_DEFAULT, `${WA_THROUGHPUT_DEFAULT}, Meta's default tier`)
    )
  },
  (input) =>
    Effect.gen(function*() {
      // libphonenumber's metadata loads only for this command.
      const { toE164 } = yield* Effect.promise(() => import("../messaging/phone.ts"))
      const phone = toE164(input.phone)
      if ("problem" in phone) return yield* InvalidRequest.single("--phone", phone.problem)
      const displayName = Option.isSome(input.displayName)
        ? yield* parse(Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(100)), "--display-name", input.displayName.value)
        : null
      const throughput = yield* parse(Schema.Int.pipe(Schema.between(1, 1_000_000)), "--throughput", input.throughput)
      const id = yield* accountId(input.account)
      const number = yield* (yield* WaNumbers).create({ accountId: id, phone: phone.e164, displayName, throughput })
      yield* printJson(presentNumber(number))
    })
).pipe(Command.withDescription("Onboard a WhatsApp number for an account (the first one is its default sender)"))

const waThroughput = Command.make(
  "wa-throughput",
  {
    number: Args.text({ name: "PHONE_NUMBER_ID" }).pipe(Args.withDescription("the number's phone_number_id, as create-wa-number printed it"), requiredArg),
    rate: Args.integer({ name: "N" }).pipe(Args.withDescription("messages per second upstream (1 to 1000000)"), requiredArg)
  },
  (input) =>
    Effect.gen(function*() {
      const rate = yield* parse(Schema.Int.pipe(Schema.between(1, 1_000_000)), "N", input.rate)
      const number = yield* (yield* WaNumbers).setThroughput(input.number, rate)
      if (number === undefined) return yield* new NotFound({ message: `no WhatsApp number ${input.number}` })
      yield* printJson(presentNumber(number))
    })
).pipe(Command.withDescription("Set a WhatsApp number's upstream throughput (messages per second)"))

const rotateSigningKey = Command.make("rotate-signing-key", {}, () =>
  Effect.gen(function*() {
    const { kid } = yield* (yield* SigningKeys).rotate
    yield* printJson({ kid, note: "new tokens are signed with this key; earlier keys keep verifying for 7 days" })
  })).pipe(Command.withDescription("Start signing user tokens with a new key (all nodes pick it up within a minute)"))

/**
 * The admin subcommands, each on the services it uses alone (wallet-credit builds no password
 * hasher, no signing keys and no change feed), once the database is ready (src/cli/oneShot.ts).
 * rotate-signing-key seals a private key: it runs the whole preparation, which first checks that
 * HERALD_SECRETS_KEY opens the secrets already sealed.
 */
export const adminCommands = () => {
  const accounts = Layer.mergeAll(AccountsRepo.Default, AccountRefs.Default)
  return [
    Command.provide(createBot, onDatabase(Layer.mergeAll(BotsRepo.Default, AccountRefs.Default))),
    Command.provide(botStatus, onDatabase(BotsRepo.Default)),
    Command.provide(rotateSigningKey, onDatabase(SigningKeys.Default, prepareDatabase)),
    Command.provide(createAccount, onDatabase(Layer.mergeAll(AccountsRepo.Default, Passwords.Default))),
    Command.provide(setPlan, onDatabase(accounts)),
    Command.provide(walletCredit, onDatabase(accounts)),
    Command.provide(botThroughput, onDatabase(BotsRepo.Default)),
    Command.provide(resetPassword, onDatabase(Layer.mergeAll(UsersRepo.Default, Passwords.Default))),
    Command.provide(createWaNumber, onDatabase(Layer.mergeAll(WaNumbers.Default, AccountRefs.Default))),
    Command.provide(waThroughput, onDatabase(WaNumbers.Default))
  ] as const
}
