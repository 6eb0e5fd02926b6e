import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ContactLists } from "../../contacts/ContactLists.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"

/** Handlers of ContactListsApi; the import is ContactImportRoute. */
export const ContactListsHttpLive = HttpApiBuilder.group(HeraldApi, "contactLists", (handlers) =>
  Effect.map(ContactLists, (lists) =>
    handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => lists.create(p, payload.name)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => lists.list(p, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => lists.get(p, path.list_id)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => lists.remove(p, path.list_id)))
      .handle("contacts", ({ path, urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => lists.contacts(p, path.list_id, urlParams)))))
