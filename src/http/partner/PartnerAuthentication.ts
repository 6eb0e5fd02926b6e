import { Effect, Layer, Redacted } from "effect"
import { Partners } from "../../email/Partners.ts"
import { PartnerAuthentication } from "./PartnerEmailApi.ts"

/** Each request's partner from its bearer key, checked against the database (no cache: keys are few and lookups prepared). */
export const PartnerAuthenticationLive = Layer.effect(
  PartnerAuthentication,
  Effect.map(Partners, (partners) => ({
    partnerKey: (token: Redacted.Redacted<string>) => partners.authenticate(Redacted.value(token))
  }))
)
