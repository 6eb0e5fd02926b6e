import { Effect } from "effect"
import { InvalidRequest } from "../../domain/errors.ts"
import { ApiKeys } from "../../security/ApiKeys.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentApiKey, presentApiKeyList, presentCreatedApiKey } from "./presentApiKeys.ts"

export const ApiKeysHttpLive = apiGroup(HeraldApi, "apiKeys", (handlers) =>
  Effect.map(ApiKeys, (keys) =>
    handlers
      .handle("create", ({ payload }) =>
        CurrentPrincipal.pipe(
          Effect.flatMap((p) => keys.create(p, { name: payload.name, scopes: payload.scopes, expiresAt: payload.expires_at ?? null })),
          Effect.map(presentCreatedApiKey)
        ))
      .handle("list", () => CurrentPrincipal.pipe(Effect.flatMap(keys.list), Effect.map(presentApiKeyList)))
      .handle("update", ({ path, payload }) =>
        payload.scopes !== undefined
          ? Effect.fail(InvalidRequest.single("scopes", "cannot be changed; create a new key with the scopes you need"))
          : CurrentPrincipal.pipe(
            Effect.flatMap((p) => keys.update(p, path.key_id, { name: payload.name, expiresAt: payload.expires_at })),
            Effect.map((row) => ({ success: true as const, key: presentApiKey(row) }))
          ))
      .handle("revoke", ({ path }) => CurrentPrincipal.pipe(Effect.flatMap((p) => keys.revoke(p, path.key_id)), Effect.as({ success: true as const })))))
