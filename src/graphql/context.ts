import DataLoader from "dataloader"
import type { Effect } from "effect"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import type { ConversationRow } from "./reads.ts"
import type { GraphqlServices } from "./services.ts"
import type { OpenFeed } from "./subscriptions/LiveFeed.ts"

/** Runs a service's Effect for a resolver; its failure becomes the field's GraphQL error. */
export type Run = <A, E>(effect: Effect.Effect<A, E, never>) => Promise<A>

/** What every resolver of one request sees. */
export interface GraphqlContext {
  readonly account: SecretKeyAccount
  readonly services: GraphqlServices
  readonly run: Run
  readonly loaders: Loaders
  /** Live events for subscriptions: given over the WebSocket only. */
  readonly openFeed?: OpenFeed | undefined
}

export type Loaders = ReturnType<typeof makeLoaders>

/**
 * One request's DataLoaders: the by-id reads of each level of a query are one statement each,
 * whatever the page size (a page of conversations loads its contacts, assignees and sends' statuses
 * in three statements).
 */
export const makeLoaders = (account: SecretKeyAccount, services: GraphqlServices, run: Run) => {
  const reads = services.reads
  const byIds = <V>(load: (ids: ReadonlyArray<string>) => Effect.Effect<Map<string, V>>) =>
    new DataLoader<string, V | undefined>(async (ids) => {
      const found = await run(load(ids))
      return ids.map((id) => found.get(id))
    })
  const conversationsOfContact = new Map<number, DataLoader<string, ReadonlyArray<ConversationRow>>>()
  return {
    contact: byIds((ids) => reads.contactsByIds(account.accountId, ids)),
    conversation: byIds((ids) => reads.conversationsByIds(account.accountId, ids)),
    member: byIds((ids) => reads.membersOf(account.accountId, ids)),
    send: byIds((ids) => reads.sendsOf(account.accountId, ids)),
    inbound: byIds((ids) => reads.inboundOf(account.accountId, ids)),
    template: byIds((ids) => reads.templatesByIds(account.accountId, ids)),
    call: byIds((ids) => reads.callsByIds(account.accountId, ids)),
    /** The first page of each contact's conversations, per page size. */
    conversationsOfContact: (limit: number) => {
      let loader = conversationsOfContact.get(limit)
      if (loader === undefined) {
        loader = new DataLoader(async (ids: ReadonlyArray<string>) => {
          const found = await run(reads.conversationsOfContacts(account.accountId, ids, limit))
          return ids.map((id) => found.get(id) ?? [])
        })
        conversationsOfContact.set(limit, loader)
      }
      return loader
    }
  }
}
