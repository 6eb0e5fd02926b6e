import { Effect } from "effect"
import { Conversations } from "../conversations/Conversations.ts"
import { Customers } from "../customers/Customers.ts"
import { CustomersRepo } from "../customers/CustomersRepo.ts"
import { ListCursors } from "../storage/ListCursors.ts"
import { PublicMessages } from "../whatsapp/PublicMessages.ts"
import { GraphqlReads } from "./reads.ts"

/** The services GraphQL's resolvers call: REST's own, so every rule holds once. */
export const graphqlServices = Effect.all({
  reads: GraphqlReads,
  customers: Customers,
  customersRepo: CustomersRepo,
  conversations: Conversations,
  messages: PublicMessages,
  cursors: ListCursors
})
export type GraphqlServices = Effect.Effect.Success<typeof graphqlServices>
