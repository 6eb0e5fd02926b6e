import { Effect } from "effect"
import { ContactLists } from "../../contacts/ContactLists.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentDone } from "./listPage.ts"
import { presentContactList, presentContactLists, presentContacts } from "./presentContactLists.ts"

/** Handlers of ContactListsApi; the import is ContactImportRoute. */
export const ContactListsHttpLive = apiGroup(HeraldApi, "contactLists", (handlers) =>
  Effect.map(ContactLists, (lists) =>
    handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(lists.create(p, payload.name), presentContactList)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(lists.list(p, urlParams), presentContactLists)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(lists.get(p, path.list_id), presentContactList)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(lists.remove(p, path.list_id), presentDone)))
      .handle("contacts", ({ path, urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(lists.contacts(p, path.list_id, urlParams), presentContacts)))))
