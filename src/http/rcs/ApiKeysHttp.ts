import { Effect } from "effect"
import { InvalidRequest } from "../../domain/errors.ts"
import { ApiKeys } from "../../security/ApiKeys.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

export const ApiKeysHttpLive = apiGroup(HeraldApi, "apiKeys", (handlers) =>
  Effect.map(ApiKeys, (keys) =>
    handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => keys.create(p, { name: payload.name, scopes: payload.scopes, expiresAt: payload.expires_at ?? null })))
      .handle("list", () => Effect.flatMap(CurrentPrincipal, keys.list))
      .handle("update", ({ path, payload }) =>
        payload.scopes !== undefined
          ? Effect.fail(InvalidRequest.single("scopes", "cannot be changed; create a new key with the scopes you need"))
          : Effect.flatMap(CurrentPrincipal, (p) => keys.update(p, path.key_id, { name: payload.name, expiresAt: payload.expires_at })))
      .handle("revoke", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => keys.revoke(p, path.key_id)))))
