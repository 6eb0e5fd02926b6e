import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { InvalidApiKey } from "../../domain/errors.ts"
import { Partners } from "../../email/Partners.ts"
import { readBearer } from "../bearer.ts"
import { PartnerAuthentication } from "./PartnerEmailApi.ts"

/** Each request's partner from its bearer key, checked against the database (no cache: keys are few and lookups prepared). */
export const PartnerAuthenticationLive = Layer.effect(
  PartnerAuthentication,
  Effect.map(Partners, (partners) => ({
    partnerKey: () =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const read = readBearer(request.headers.authorization)
        return "problem" in read ? Effect.fail(InvalidApiKey.because(read.problem)) : partners.authenticate(read.credential)
      })
  }))
)
