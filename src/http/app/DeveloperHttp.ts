import { Effect } from "effect"
import { SecretKeys } from "../../security/SecretKeys.ts"
import { Webhooks } from "../../webhooks/Webhooks.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentDeveloperSet, presentDeveloperWebhook, presentDone, presentRotated } from "../rcs/webhooksPresent.ts"
import { presentSecretKey } from "./presentAccount.ts"

export const DeveloperHttpLive = apiGroup(HeraldApi, "developer", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* SecretKeys
    const webhooks = yield* Webhooks
    return handlers
      .handle("generateSecretKey", () => CurrentPrincipal.pipe(Effect.flatMap(keys.generate), Effect.map(presentSecretKey)))
      .handle("setDeveloperWebhook", ({ payload }) => Effect.flatMap(CurrentPrincipal, (principal) => webhooks.setDeveloper(principal, payload.url)).pipe(Effect.map(presentDeveloperSet)))
      .handle("getDeveloperWebhook", () => Effect.flatMap(CurrentPrincipal, webhooks.getDeveloper).pipe(Effect.map(presentDeveloperWebhook)))
      .handle("rotateDeveloperWebhookSecret", () => Effect.flatMap(CurrentPrincipal, webhooks.rotateDeveloper).pipe(Effect.map(presentRotated)))
      .handle("deleteDeveloperWebhook", () => Effect.flatMap(CurrentPrincipal, webhooks.removeDeveloper).pipe(Effect.map(presentDone)))
  }))
