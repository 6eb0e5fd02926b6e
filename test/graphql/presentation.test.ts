import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execute, parse } from "graphql"
import { makeExecutableSchema } from "../../src/graphql/executableSchema.ts"
import { withCodes } from "../../src/graphql/operations.ts"
import { GraphqlReads } from "../../src/graphql/reads.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { ListCursors } from "../../src/storage/ListCursors.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { graphqlContext } from "../support/graphqlContext.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

// What GraphQL shows of stored rows, against shared/design/graphql.md and docs/graphql.md: a
// message's readable text beside its structured content (an interactive message's body, a
// template's body with its values, an inbound reply's title), a MEMBER assignee's member_id, an
// admin credit's ledger reference.

const Env = Layer.mergeAll(GraphqlReads.Default, ListCursors.Default).pipe(
  Layer.provideMerge(Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive)))),
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

const INTERACTIVE = {
  type: "interactive",
  object: { type: "button", body: { text: "Pick a slot" }, action: { buttons: [{ type: "reply", reply: { id: "am", title: "Morning" } }] } }
}
const TEMPLATE = {
  type: "template",
  object: { name: "order_ready", language: { code: "en", policy: "deterministic" }, components: [{ type: "body", parameters: [{ type: "text", text: "Asha" }, { type: "text", text: "#42" }] }] }
}
const IMAGE = { type: "image", object: { link: "https://example.com/a.jpg", caption: "Your receipt" } }
const REPLY = { from: "919876500001", id: "wamid.reply", timestamp: "1700000000", type: "interactive", interactive: { type: "button_reply", button_reply: { id: "am", title: "Morning" } } }

const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [owner] = yield* sql<{ userId: string }>`INSERT INTO users (email, password_hash) VALUES ('owner@present.io', 'x') RETURNING user_id::text`
  const [agent] = yield* sql<{ userId: string }>`INSERT INTO users (email, password_hash) VALUES ('agent@present.io', 'x') RETURNING user_id::text`
  const [account] = yield* sql<{ accountId: string }>`
    INSERT INTO accounts (label, plan, owner_user_id, wallet_balance) VALUES ('present', 'enterprise', ${owner!.userId}, 10) RETURNING account_id::text`
  const accountId = account!.accountId
  yield* sql`INSERT INTO memberships (account_id, user_id, role) VALUES (${accountId}, ${owner!.userId}, 'owner')`
  const [member] = yield* sql<{ memberId: string }>`
    INSERT INTO memberships (account_id, user_id, role) VALUES (${accountId}, ${agent!.userId}, 'operator') RETURNING member_id::text`
  yield* sql`INSERT INTO wa_numbers (phone_number_id, waba_id, account_id, phone, throughput, is_default) VALUES ('100200400', '900', ${accountId}, '+919800000002', 80, true)`
  const [customer] = yield* sql<{ customerId: string }>`
    INSERT INTO customers (account_id, phone, name) VALUES (${accountId}, '+919876500001', 'Asha') RETURNING customer_id::text`
  const [other] = yield* sql<{ customerId: string }>`
    INSERT INTO customers (account_id, phone, name) VALUES (${accountId}, '+919876500002', 'Ravi') RETURNING customer_id::text`
  const [template] = yield* sql<{ templateId: string }>`
    INSERT INTO wa_templates (account_id, waba_id, name, language, category, kind, components, status)
    VALUES (${accountId}, '900', 'order_ready', 'en', 'UTILITY', 'standard',
            ${JSON.stringify([{ type: "BODY", text: "Hi {{1}}, your order {{2}} is ready." }])}::jsonb, 'APPROVED')
    RETURNING template_id::text`
  const templateMessage = "11111111-1111-4111-8111-000000000003"
  const [conversation] = yield* sql<{ conversationId: string }>`
    INSERT INTO conversations (account_id, phone_number_id, customer_id, customer_phone, assignee_user_id, last_inbound_at, last_message, created_at)
    VALUES (${accountId}, '100200400', ${customer!.customerId}, '+919876500001', ${agent!.userId}, now(),
            jsonb_build_object('direction', 'outbound', 'id', ${templateMessage}::text, 'type', 'Template', 'text', NULL, 'at', now()),
            now() - interval '1 minute')
    RETURNING conversation_id::text`
  // The owner's conversation, whose last message is the inbound reply.
  const [owned] = yield* sql<{ conversationId: string }>`
    INSERT INTO conversations (account_id, phone_number_id, customer_id, customer_phone, assignee_user_id, last_inbound_at, last_message)
    VALUES (${accountId}, '100200400', ${other!.customerId}, '+919876500002', ${owner!.userId}, now(),
            jsonb_build_object('direction', 'inbound', 'id', 'wamid.other', 'type', 'InteractiveButtonReply', 'text', 'Evening', 'at', now()))
    RETURNING conversation_id::text`
  yield* sql`
    INSERT INTO wa_inbound (upstream_id, account_id, phone_number_id, conversation_id, customer_id, sender, type, text, payload, received_at) VALUES
      ('wamid.reply', ${accountId}, '100200400', ${conversation!.conversationId}, ${customer!.customerId}, '+919876500001', 'InteractiveButtonReply', 'Morning',
       ${JSON.stringify(REPLY)}::jsonb, now() - interval '30 seconds'),
      ('wamid.other', ${accountId}, '100200400', ${owned!.conversationId}, ${other!.customerId}, '+919876500002', 'InteractiveButtonReply', 'Evening',
       ${JSON.stringify({ ...REPLY, id: "wamid.other", interactive: { type: "button_reply", button_reply: { id: "pm", title: "Evening" } } })}::jsonb, now())`
  const send = (id: string, type: string, content: unknown, ago: number, templateId: string | null = null) =>
    sql`
      INSERT INTO wa_messages (message_id, account_id, phone_number_id, recipient, type, content, template_id, status, price, created_at)
      VALUES (${id}::uuid, ${accountId}, '100200400', '+919876500001', ${type}, ${JSON.stringify(content)}::jsonb, ${templateId}::uuid, 'sent', 0,
              now() - ${ago} * interval '1 second')`
  yield* send("11111111-1111-4111-8111-000000000001", "InteractiveButton", INTERACTIVE, 40)
  yield* send("11111111-1111-4111-8111-000000000002", "Image", IMAGE, 20)
  yield* send(templateMessage, "Template", TEMPLATE, 10, template!.templateId)
  // `herald admin wallet-credit` books a credit without a reference; a charge names its message.
  yield* sql`INSERT INTO wallet_transactions (account_id, kind, amount, balance_after, reference, created_at) VALUES
    (${accountId}, 'credit', 10, 10, NULL, now() - interval '1 minute'),
    (${accountId}, 'charge', 0.5, 9.5, ${templateMessage}, now())`
  return { accountId, memberId: member!.memberId, conversationId: conversation!.conversationId, ownedId: owned!.conversationId }
})

const run = (accountId: string, query: string) =>
  Effect.gen(function*() {
    const context = yield* graphqlContext(accountId, "present")
    const result = withCodes(yield* Effect.promise(async () => execute({ schema: makeExecutableSchema(), document: parse(query), contextValue: context })))
    expect(result.errors).toBeUndefined()
    return result.data as any
  })

layer(Env, { timeout: 60_000 })("GraphQL presentation", (it) => {
  it.effect("messages: a readable text beside the content, for interactive, media, template and inbound replies; the last message too", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReadyFor("30 seconds")
      const seeded = yield* seed
      const data = yield* run(seeded.accountId, `{
        conversation(id: "${seeded.conversationId}") {
          last_message { id type text content }
          messages { edges { node { direction type text content } } }
        }
        owned: conversation(id: "${seeded.ownedId}") { last_message { type text content } }
      }`)
      expect(data.conversation.messages.edges.map((e: any) => e.node)).toEqual([
        {
          direction: "OUTBOUND",
          type: "Template",
          text: "Hi Asha, your order #42 is ready.",
          content: { type: "template", template: TEMPLATE.object }
        },
        { direction: "OUTBOUND", type: "Image", text: "Your receipt", content: { type: "image", image: IMAGE.object } },
        { direction: "INBOUND", type: "InteractiveButtonReply", text: "Morning", content: { type: "interactive", interactive: REPLY.interactive } },
        { direction: "OUTBOUND", type: "InteractiveButton", text: "Pick a slot", content: { type: "interactive", interactive: INTERACTIVE.object } }
      ])
      // The last message (conversations.last_message holds no content, nor a template's text): read from its send.
      expect(data.conversation.last_message).toEqual({
        id: "11111111-1111-4111-8111-000000000003",
        type: "Template",
        text: "Hi Asha, your order #42 is ready.",
        content: { type: "template", template: TEMPLATE.object }
      })
      expect(data.owned.last_message).toEqual({
        type: "InteractiveButtonReply",
        text: "Evening",
        content: { type: "interactive", interactive: { type: "button_reply", button_reply: { id: "pm", title: "Evening" } } }
      })
    }))

  it.effect("Agent: a MEMBER's member_id is the member's (the team list's), null for the owner; an admin credit's reference is admin", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReadyFor("30 seconds")
      const sql = yield* SqlClient.SqlClient
      const [found] = yield* sql<{ accountId: string }>`SELECT account_id::text FROM accounts WHERE label = 'present'`
      const seeded = found === undefined ? yield* seed : undefined
      const accountId = seeded?.accountId ?? found!.accountId
      const [member] = yield* sql<{ memberId: string }>`SELECT member_id::text FROM memberships WHERE account_id = ${accountId} AND role = 'operator'`
      const data = yield* run(accountId, `{
        conversations { edges { node { contact { name } assignee { kind email member_id ai_agent_id } } } }
        walletTransactions { edges { node { kind amount reference } } }
      }`)
      const assignees = Object.fromEntries(data.conversations.edges.map((e: any) => [e.node.contact.name, e.node.assignee]))
      expect(assignees).toEqual({
        Asha: { kind: "MEMBER", email: "agent@present.io", member_id: member!.memberId, ai_agent_id: null },
        Ravi: { kind: "MEMBER", email: "owner@present.io", member_id: null, ai_agent_id: null }
      })
      expect(data.walletTransactions.edges.map((e: any) => e.node)).toEqual([
        { kind: "CHARGE", amount: -0.5, reference: "11111111-1111-4111-8111-000000000003" },
        { kind: "CREDIT", amount: 10, reference: "admin" }
      ])
    }))
})
