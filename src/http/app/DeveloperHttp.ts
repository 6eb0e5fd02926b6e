import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { SecretKeys } from "../../security/SecretKeys.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"

export const DeveloperHttpLive = HttpApiBuilder.group(HeraldApi, "developer", (handlers) =>
  Effect.map(SecretKeys, (keys) => handlers.handle("generateSecretKey", () => Effect.flatMap(CurrentPrincipal, keys.generate))))
