import { Effect } from "effect"
import { ContactLists } from "../../contacts/ContactLists.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

/** Handlers of ContactListsApi; the import is ContactImportRoute. */
export const ContactListsHttpLive = apiGroup(HeraldApi, "contactLists", (handlers) =>
  Effect.map(ContactLists, (lists) =>
    handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => lists.create(p, payload.name)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => lists.list(p, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => lists.get(p, path.list_id)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => lists.remove(p, path.list_id)))
      .handle("contacts", ({ path, urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => lists.contacts(p, path.list_id, urlParams)))))
