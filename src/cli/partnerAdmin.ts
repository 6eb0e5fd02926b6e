import { Args, Command, Options } from "@effect/cli"
import { Effect, Layer, Option, Schema } from "effect"
import { InvalidRequest } from "../domain/errors.ts"
import { Partners } from "../email/Partners.ts"
import { required, requiredArg } from "./help.ts"
import { printJson } from "./output.ts"

const parse = <A, I>(schema: Schema.Schema<A, I>, name: string, value: I) =>
  Schema.decode(schema)(value).pipe(Effect.mapError(() => InvalidRequest.single(name, "invalid value")))

const partnerArg = Args.text({ name: "PARTNER" }).pipe(Args.withDescription("the partner's id (a uuid), as create-partner printed it"), requiredArg)

const createPartner = Command.make(
  "create-partner",
  { name: Options.text("name").pipe(Options.withDescription("the partner's name, for operators: 1 to 200 characters"), required) },
  (input) =>
    Effect.gen(function*() {
      const name = yield* parse(Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)), "--name", input.name)
      yield* printJson(yield* (yield* Partners).create(name))
    })
).pipe(Command.withDescription("Create a partner of the e-mail API (prints {partner_id, name, api_key}; the key is shown only now)"))

const productionAccess = Command.make(
  "email-production-access",
  {
    partner: partnerArg,
    decision: Args.choice([["grant", "grant"], ["deny", "deny"]] as const, { name: "DECISION" }).pipe(requiredArg),
    reason: Options.text("reason").pipe(Options.withDescription("why, kept with the decision"), Options.optional)
  },
  (input) =>
    Effect.gen(function*() {
      const reason = Option.getOrUndefined(input.reason)
      yield* printJson(yield* (yield* Partners).decideProductionAccess(input.partner, input.decision, reason))
    })
).pipe(Command.withDescription("Settle a partner's latest pending production access request (a grant without one records one): out of the sandbox, production quotas"))

const quota = Command.make(
  "email-quota",
  {
    partner: partnerArg,
    daily: Options.integer("daily").pipe(
      Options.withDescription("recipients per 24 hours (0 to 100000000). Give --daily, --rate or both; an absent one is left as it is."),
      Options.optional
    ),
    rate: Options.integer("rate").pipe(
      Options.withDescription("recipients per second (1 to 1000000). Give --daily, --rate or both; an absent one is left as it is."),
      Options.optional
    )
  },
  (input) =>
    Effect.gen(function*() {
      const daily = Option.getOrUndefined(input.daily)
      const rate = Option.getOrUndefined(input.rate)
      if (daily === undefined && rate === undefined) return yield* InvalidRequest.single("--daily", "give --daily, --rate or both")
      if (daily !== undefined) yield* parse(Schema.Int.pipe(Schema.between(0, 100_000_000)), "--daily", daily)
      if (rate !== undefined) yield* parse(Schema.Int.pipe(Schema.between(1, 1_000_000)), "--rate", rate)
      const row = yield* (yield* Partners).setQuota(input.partner, { daily, rate })
      yield* printJson({ partner_id: row.partnerId, max_24_hour_send: row.max24HourSend, max_send_rate: row.maxSendRate, production_access_enabled: row.productionAccess })
    })
).pipe(Command.withDescription("Change a partner's e-mail quotas"))

const identityVerify = Command.make(
  "email-identity-verify",
  { identity: Args.text({ name: "IDENTITY_ID" }).pipe(Args.withDescription("the identity's id (a uuid)"), requiredArg) },
  (input) => Effect.flatMap(Partners, (partners) => Effect.flatMap(partners.verifyIdentity(input.identity), printJson))
).pipe(Command.withDescription("Mark a partner's identity verified (a domain once its DKIM records are published)"))

/** The partner e-mail admin subcommands, each run on the given layer. */
export const partnerAdminCommands = <E, R>(layer: Layer.Layer<Partners, E, R>) =>
  [
    Command.provide(createPartner, layer),
    Command.provide(productionAccess, layer),
    Command.provide(quota, layer),
    Command.provide(identityVerify, layer)
  ] as const
