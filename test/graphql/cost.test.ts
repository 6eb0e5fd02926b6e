import { describe, expect, it } from "@effect/vitest"
import { buildSchema, type DocumentNode, getIntrospectionQuery, graphqlSync, parse, validate } from "graphql"
import {
  costOf,
  type CostReport,
  MAX_COST,
  MAX_DEPTH,
  MAX_FIELDS,
  MAX_SELECTIONS,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX
} from "../../src/graphql/cost.ts"

// The cost of an operation is measured before it runs, on the validated document with its variables.
// No database: a small schema shaped like Herald's (connections with edges { cursor node } and
// pageInfo, paged by `page: PageInput`).
const schema = buildSchema(`
  type Query {
    me: Me
    contacts(page: PageInput, filter: ContactFilter): ContactConnection
    conversations(page: PageInput): ConversationConnection
    contact(id: ID!): Contact
  }
  type Me { id: ID! name: String email: String }
  input ContactFilter { name: String phone: String }
  input PageInput { limit: Int cursor: String }
  type PageInfo { hasNextPage: Boolean! endCursor: String }
  type Contact { id: ID! name: String phone: String conversations(page: PageInput): ConversationConnection }
  type Conversation { id: ID! contact: Contact last_message: Message }
  type Message { id: ID! text: String }
  type ContactConnection { edges: [ContactEdge!]! pageInfo: PageInfo! }
  type ContactEdge { cursor: String! node: Contact! }
  type ConversationConnection { edges: [ConversationEdge!]! pageInfo: PageInfo! }
  type ConversationEdge { cursor: String! node: Conversation! }
`)

const validated = (source: string): DocumentNode => {
  const document = parse(source)
  expect(validate(schema, document).map((error) => error.message)).toEqual([])
  return document
}

const measure = (source: string, variables?: Record<string, unknown>, operationName?: string): CostReport =>
  costOf(schema, validated(source), variables, operationName)

const clean = (report: CostReport) => {
  expect(report.problems).toEqual([])
  expect(report.truncated).toBe(false)
  return report
}

const kinds = (report: CostReport) => report.problems.map((problem) => problem.kind)

describe("costOf: fields", () => {
  it("a field costs 1 plus its selection; depth counts nested fields", () => {
    expect(clean(measure(`{ me { id } }`))).toMatchObject({ cost: 2, depth: 2, fields: 2 })
    expect(clean(measure(`{ me { id name email } }`))).toMatchObject({ cost: 4, depth: 2, fields: 4 })
    expect(clean(measure(`{ me { id } contact(id: "1") { id name phone } }`))).toMatchObject({ cost: 6, depth: 2, fields: 6 })
  })

  it("nested fields add up along the path", () => {
    // conversations(1) + 20 × (node: contact(1 + name 1) + last_message(1 + text 1)) = 1 + 20 × 4
    const report = clean(measure(`{ conversations { edges { node { contact { name } last_message { text } } } } }`))
    expect(report).toMatchObject({ cost: 81, depth: 5, fields: 7 })
  })

  it("__typename is free (it still counts as a field selection)", () => {
    const report = clean(measure(`{
      __typename
      me { __typename id }
      contacts { __typename edges { __typename cursor node { __typename id } } pageInfo { __typename } }
    }`))
    // me (1 + id 1) + contacts (1 + 20 × id 1)
    expect(report.cost).toBe(2 + 21)
    expect(report.fields).toBe(14)
  })
})

describe("costOf: connections", () => {
  const contacts = (page: string) => `{ contacts${page} { edges { cursor node { id name } } } }`

  it("without a page, or with a null page or limit, the limit is 20", () => {
    const expected = 1 + PAGE_LIMIT_DEFAULT * 2
    expect(clean(measure(contacts(""))).cost).toBe(expected)
    expect(clean(measure(contacts("(page: null)"))).cost).toBe(expected)
    expect(clean(measure(contacts(`(page: { cursor: "abc" })`))).cost).toBe(expected)
    expect(clean(measure(contacts("(page: { limit: null })"))).cost).toBe(expected)
    // edges, cursor and node add nothing themselves
    expect(clean(measure(contacts(""))).fields).toBe(6)
  })

  it("an inline limit multiplies the node's selection", () => {
    expect(clean(measure(contacts("(page: { limit: 5 })"))).cost).toBe(1 + 5 * 2)
    expect(clean(measure(contacts(`(page: { limit: 1, cursor: "x" }, filter: { name: "a" })`))).cost).toBe(1 + 1 * 2)
    expect(clean(measure(contacts("(page: { limit: 100 })"))).cost).toBe(1 + 100 * 2)
  })

  it("a limit through a variable (missing or null: 20; a variable's default applies)", () => {
    const source = `query ($n: Int) { contacts(page: { limit: $n }) { edges { node { id name } } } }`
    expect(clean(measure(source, { n: 7 })).cost).toBe(1 + 7 * 2)
    expect(clean(measure(source, {})).cost).toBe(1 + 20 * 2)
    expect(clean(measure(source, undefined)).cost).toBe(1 + 20 * 2)
    expect(clean(measure(source, { n: null })).cost).toBe(1 + 20 * 2)
    const withDefault = `query ($n: Int = 3) { contacts(page: { limit: $n }) { edges { node { id name } } } }`
    expect(clean(measure(withDefault, {})).cost).toBe(1 + 3 * 2)
    expect(clean(measure(withDefault, { n: 9 })).cost).toBe(1 + 9 * 2)
  })

  it("the whole page as a variable", () => {
    const source = `query ($page: PageInput) { contacts(page: $page) { edges { node { id name } } } }`
    expect(clean(measure(source, { page: { limit: 3, cursor: "abc" } })).cost).toBe(1 + 3 * 2)
    expect(clean(measure(source, { page: { cursor: "abc" } })).cost).toBe(1 + 20 * 2)
    expect(clean(measure(source, { page: null })).cost).toBe(1 + 20 * 2)
    expect(clean(measure(source, {})).cost).toBe(1 + 20 * 2)
    const withDefault = `query ($page: PageInput = { limit: 4 }) { contacts(page: $page) { edges { node { id name } } } }`
    expect(clean(measure(withDefault)).cost).toBe(1 + 4 * 2)
  })

  it("nested connections multiply: contacts(50) × conversations(10)", () => {
    const source = `{
      contacts(page: { limit: 50 }) { edges { node { conversations(page: { limit: 10 }) { edges { node { id } } } } } }
    }`
    // 1 + 50 × (conversations 1 + 10 × id 1)
    expect(clean(measure(source))).toMatchObject({ cost: 1 + 50 * (1 + 10 * 1), depth: 7, fields: 7 })

    const richer = `{
      contacts(page: { limit: 50 }) { edges { node { conversations(page: { limit: 10 }) { edges { node { id last_message { text } } } } } } }
    }`
    // Too expensive (the caller answers QUERY_TOO_EXPENSIVE), but no shape problem.
    const report = clean(measure(richer))
    expect(report.cost).toBe(1 + 50 * (1 + 10 * 3))
    expect(report.cost).toBeGreaterThan(MAX_COST)
  })

  it("pageInfo costs its selection, once", () => {
    expect(clean(measure(`{ contacts { pageInfo { hasNextPage } } }`)).cost).toBe(1 + 1)
    expect(clean(measure(`{ contacts { pageInfo { hasNextPage endCursor } } }`)).cost).toBe(1 + 2)
    const both = `{ contacts(page: { limit: 10 }) { pageInfo { hasNextPage endCursor } edges { cursor node { id } } } }`
    expect(clean(measure(both)).cost).toBe(1 + 10 * 1 + 2)
    // pageInfo of a nested connection runs once per outer node
    const nested = `{ contacts(page: { limit: 4 }) { edges { node { conversations { pageInfo { hasNextPage } } } } } }`
    expect(clean(measure(nested)).cost).toBe(1 + 4 * (1 + 1))
  })
})

describe("costOf: fragments and directives", () => {
  it("named fragments count where (and as often as) they are spread", () => {
    const report = clean(measure(`
      query {
        me { ...MeFields }
        contacts(page: { limit: 2 }) { ...ContactPage }
        one: contact(id: "1") { ...ContactFields ...ContactFields }
      }
      fragment MeFields on Me { id name }
      fragment ContactFields on Contact { id name phone }
      fragment ContactPage on ContactConnection { edges { node { ...ContactFields } } pageInfo { hasNextPage } }
    `))
    // me 1 + 2; contacts 1 + 2 × 3 + 1; one 1 + 3 + 3
    expect(report.cost).toBe(3 + 8 + 7)
    expect(report.fields).toBe(3 + 8 + 7)
  })

  it("inline fragments count too, in connections as well", () => {
    expect(clean(measure(`{ contact(id: "1") { ... on Contact { id name } ... { phone } } }`)).cost).toBe(1 + 3)
    expect(clean(measure(`{ contacts { ... on ContactConnection { edges { ... on ContactEdge { node { ... on Contact { id } } } } } } }`)).cost)
      .toBe(1 + 20 * 1)
  })

  it("@skip(if: true) and @include(if: false) selections count for nothing", () => {
    const source = `query ($s: Boolean!, $i: Boolean!) {
      me @skip(if: $s) { id }
      contact(id: "1") @include(if: $i) { id name }
      contacts { edges { node { id phone @skip(if: $s) ... @include(if: $i) { name } } } }
      ...Extra @skip(if: $s)
    }
    fragment Extra on Query { conversations(page: { limit: 1 }) { edges { node { id } } } }`
    const off = clean(measure(source, { s: true, i: false }))
    expect(off.cost).toBe(1 + 20 * 1)
    expect(off.fields).toBe(4)
    const on = clean(measure(source, { s: false, i: true }))
    // me 2 + contact 3 + contacts 1 + 20 × 3 + conversations 2
    expect(on.cost).toBe(2 + 3 + 61 + 2)
    expect(clean(measure(`{ me @skip(if: true) { id } contact(id: "1") @include(if: true) { id } }`)).cost).toBe(2)
  })
})

describe("costOf: limits", () => {
  it(`a cost of exactly ${MAX_COST} passes and ${MAX_COST + 1} is a problem (connections)`, () => {
    const document = (last: number) => `{
      a: contacts(page: { limit: 100 }) { edges { node { id name phone } } }
      b: contacts(page: { limit: 100 }) { edges { node { id name phone } } }
      c: contacts(page: { limit: 100 }) { edges { node { id name phone } } }
      conversations(page: { limit: ${last} }) { edges { node { id } } }
    }`
    // 3 × (1 + 100 × 3) + (1 + last)
    expect(clean(measure(document(96))).cost).toBe(1000)
    // The cost is the caller's to compare with MAX_COST: it is no shape problem.
    const over = clean(measure(document(97)))
    expect(over.cost).toBe(1001)
    expect(over.cost).toBeGreaterThan(MAX_COST)
  })

  it(`a cost of exactly ${MAX_COST} passes and ${MAX_COST + 1} is a problem (plain fields)`, () => {
    const mes = Array.from({ length: 500 }, (_, index) => `m${index}: me { id }`).join("\n")
    const exact = clean(measure(`{ __typename ${mes} }`))
    expect(exact).toMatchObject({ cost: 1000, fields: 1001 })
    const over = clean(measure(`{ __typename ${mes} contact(id: "1") { __typename } }`))
    expect(over.cost).toBe(1001)
    expect(over.cost).toBeGreaterThan(MAX_COST)
  })

  it("a page limit outside 1..100 is a problem naming the argument path, not clamped silently", () => {
    for (const limit of [0, 101, -1]) {
      const report = measure(`{ contacts(page: { limit: ${limit} }) { edges { node { id } } } }`)
      expect(report.problems).toEqual([{
        kind: "page_limit",
        message: `page.limit must be an integer from 1 to ${PAGE_LIMIT_MAX}, got ${limit}`,
        field: "contacts.page.limit"
      }])
    }
    const nested = measure(`{
      contacts { edges { node { conversations(page: { limit: 0 }) { edges { node { id } } } } } }
      mine: conversations(page: { limit: 101 }) { pageInfo { hasNextPage } }
    }`)
    expect(nested.problems.map((problem) => problem.field)).toEqual([
      "contacts.edges.node.conversations.page.limit",
      "mine.page.limit"
    ])
    const viaVariable = `query ($n: Int, $page: PageInput) {
      contacts(page: { limit: $n }) { edges { node { id } } }
      conversations(page: $page) { edges { node { id } } }
    }`
    expect(measure(viaVariable, { n: 101, page: { limit: 0 } }).problems.map((problem) => problem.field)).toEqual([
      "contacts.page.limit",
      "conversations.page.limit"
    ])
    expect(clean(measure(viaVariable, { n: 1, page: { limit: 100 } })).cost).toBe(2 + 101)
  })

  it(`fields nested deeper than ${MAX_DEPTH} are a problem`, () => {
    const twelve = clean(measure(`{ contact(id: "1") { conversations { edges { node { contact { conversations { edges { node {
      contact { conversations { edges { cursor } } } } } } } } } } } }`))
    expect(twelve.depth).toBe(12)
    // (20 × 20 × 20 nodes also cost more than 1000, which is no problem of the report)
    const thirteen = measure(`{ contact(id: "1") { conversations { edges { node { contact { conversations { edges { node {
      contact { conversations { edges { node { id } } } } } } } } } } } } }`)
    expect(thirteen.depth).toBe(13)
    expect(thirteen.problems).toEqual([{
      kind: "depth",
      message: `the operation nests fields deeper than ${MAX_DEPTH} levels`,
      field: "contact.conversations.edges.node.contact.conversations.edges.node.contact.conversations.edges.node.id"
    }])
    // Far deeper: the walk stops one level past the limit.
    let deep = "id"
    for (let level = 0; level < 40; level++) deep = `contact { conversations(page: { limit: 1 }) { edges { node { ${deep} } } } }`
    const report = measure(`{ conversations { edges { node { ${deep} } } } }`)
    expect(report.depth).toBe(MAX_DEPTH + 1)
    expect(report.truncated).toBe(true)
    expect(kinds(report)).toEqual(["depth"])
  })

  it(`more than ${MAX_FIELDS} field selections (an alias flood) is a problem, and the walk stops there`, () => {
    const typenames = (count: number) => `{ ${Array.from({ length: count }, (_, index) => `t${index}: __typename`).join(" ")} }`
    expect(clean(measure(typenames(MAX_FIELDS)))).toMatchObject({ cost: 0, fields: MAX_FIELDS })
    const justOver = measure(typenames(MAX_FIELDS + 1))
    expect(justOver.problems).toEqual([{
      kind: "fields",
      message: `the operation selects more than ${MAX_FIELDS} fields (fragments expanded)`,
      field: `t${MAX_FIELDS}`
    }])

    const flood = `{ ${Array.from({ length: 5000 }, (_, index) => `m${index}: me { id }`).join("\n")} }`
    const report = measure(flood)
    expect(report.truncated).toBe(true)
    expect(report.fields).toBe(MAX_FIELDS + 1)
    expect(kinds(report)).toEqual(["fields"])
  })

  it("fragments that double each other cost little to measure", () => {
    const doubling = (leaf: string) =>
      [
        `query { ...F0 }`,
        ...Array.from({ length: 30 }, (_, index) => `fragment F${index} on Query { ...F${index + 1} ...F${index + 1} }`),
        `fragment F30 on Query { ${leaf} }`
      ].join("\n")
    // 2^30 copies of `me { id }`: stops after MAX_FIELDS fields.
    const started = performance.now()
    const counted = measure(doubling("me { id }"))
    expect(counted.fields).toBe(MAX_FIELDS + 1)
    expect(counted.truncated).toBe(true)
    expect(kinds(counted)).toEqual(["fields"])
    // 2^30 copies of a skipped field select nothing, but visiting them is bounded too.
    const skipped = measure(doubling("me @skip(if: true) { id }"))
    expect(skipped.fields).toBe(0)
    expect(skipped.truncated).toBe(true)
    expect(skipped.problems).toEqual([{
      kind: "fields",
      message: `the operation expands to more than ${MAX_SELECTIONS} selections (fragments included)`,
      field: ""
    }])
    expect(performance.now() - started).toBeLessThan(2_000)
  })

  it("a fragment cycle (invalid, so never validated) is reported, not followed forever", () => {
    const document = parse(`
      query { ...A contact(id: "1") { ...C } }
      fragment A on Query { me { id } ...B }
      fragment B on Query { ...A }
      fragment C on Contact { id conversations { edges { node { contact { ...C } } } } }
    `)
    expect(validate(schema, document).length).toBeGreaterThan(0)
    const report = costOf(schema, document, undefined)
    // me 2; contact 1 + id 1 + conversations (1 + 20 × contact 1)
    expect(report.cost).toBe(2 + 2 + 21)
    expect(report.problems).toEqual([
      { kind: "fragments", message: `fragment "A" spreads itself (A → B → A)`, field: "" },
      { kind: "fragments", message: `fragment "C" spreads itself (C → C)`, field: "contact.conversations.edges.node.contact" }
    ])
  })
})

describe("costOf: operations and variables", () => {
  const source = `
    query Me { me { id } }
    query Contacts($n: Int) { contacts(page: { limit: $n }) { edges { node { id } } } }
    mutation Nothing { __typename }
  `

  it("operationName chooses among several operations", () => {
    expect(clean(measure(source, undefined, "Me")).cost).toBe(2)
    expect(clean(measure(source, { n: 5 }, "Contacts")).cost).toBe(6)
    expect(clean(measure(`query Only { me { id name } }`, undefined, undefined)).cost).toBe(3)
  })

  it("no operation chosen, or an unknown one, is a problem", () => {
    expect(measure(source).problems).toEqual([
      { kind: "operation", message: "Must provide operation name if query contains multiple operations.", field: "" }
    ])
    expect(measure(source, undefined, "Other").problems).toEqual([
      { kind: "operation", message: `Unknown operation named "Other".`, field: "" }
    ])
    // The schema has no mutation type (validation would say so too).
    expect(costOf(schema, parse(source), undefined, "Nothing").problems.map((problem) => problem.kind)).toEqual(["operation"])
  })

  it("variables that do not coerce are left to execution, but a bad page limit among them is still named", () => {
    const source = `query ($n: Int, $page: PageInput) {
      contacts(page: { limit: $n }) { edges { node { id } } }
      conversations(page: $page) { edges { node { id } } }
    }`
    const report = measure(source, { n: "many", page: { limit: 5, unknown: true } })
    expect(report.problems).toEqual([{ kind: "page_limit", message: `page.limit must be an integer from 1 to 100, got "many"`, field: "contacts.page.limit" }])
    // the raw values are measured: conversations at limit 5
    expect(report.cost).toBe(1 + 20 + 1 + 5)
    expect(clean(measure(source, { n: 2, page: { limit: 5, unknown: true } })).cost).toBe(1 + 2 + 1 + 5)
  })
})

// A schema the size of a real API (interfaces, unions, enums, inputs, deprecations, directives,
// mutations, subscriptions) for the standard introspection query GraphiQL sends.
const apiSchema = buildSchema(`
  """A Herald account's API."""
  schema { query: Query mutation: Mutation subscription: Subscription }
  directive @cost(weight: Int!) on FIELD_DEFINITION
  scalar DateTime @specifiedBy(url: "https://tools.ietf.org/html/rfc3339")
  scalar JSON
  enum Channel { RCS WHATSAPP }
  enum Role { OWNER ADMIN AGENT VIEWER }
  enum MessageDirection { INBOUND OUTBOUND }
  enum MessageStatus { QUEUED SENT DELIVERED READ FAILED }
  enum ConversationState { OPEN ASSIGNED RESOLVED }
  enum BroadcastState { DRAFT SCHEDULED SENDING DONE CANCELLED }
  interface Node { id: ID! }
  interface Timestamped { created_at: DateTime! updated_at: DateTime }
  type PageInfo { hasNextPage: Boolean! endCursor: String }
  input PageInput { limit: Int = 20 cursor: String }
  input ContactFilter { name: String phone: String tag: String created_after: DateTime }
  input ConversationFilter { state: ConversationState assignee: ID channel: Channel }
  type Account implements Node { id: ID! name: String! plan: String! members(page: PageInput): MemberConnection! bots: [Bot!]! }
  type Member implements Node & Timestamped { id: ID! email: String! role: Role! bots: [Bot!]! created_at: DateTime! updated_at: DateTime }
  type MemberEdge { cursor: String! node: Member! }
  type MemberConnection { edges: [MemberEdge!]! pageInfo: PageInfo! }
  type Bot implements Node { id: ID! name: String! channel: Channel! phone: String agent_id: String @deprecated(reason: "use id") }
  type Contact implements Node & Timestamped {
    id: ID! name: String phone: String! email: String traits: JSON tags: [String!]!
    conversations(page: PageInput, filter: ConversationFilter): ConversationConnection!
    created_at: DateTime! updated_at: DateTime
  }
  type ContactEdge { cursor: String! node: Contact! }
  type ContactConnection { edges: [ContactEdge!]! pageInfo: PageInfo! }
  type Conversation implements Node & Timestamped {
    id: ID! bot: Bot! contact: Contact! state: ConversationState! assignee: Member
    last_message: Message messages(page: PageInput): MessageConnection!
    created_at: DateTime! updated_at: DateTime
  }
  type ConversationEdge { cursor: String! node: Conversation! }
  type ConversationConnection { edges: [ConversationEdge!]! pageInfo: PageInfo! }
  type TextContent { text: String! }
  type MediaContent { url: String! mime_type: String! caption: String }
  type TemplateContent { template: String! parameters: JSON }
  union MessageContent = TextContent | MediaContent | TemplateContent
  type Message implements Node {
    id: ID! direction: MessageDirection! status: MessageStatus! content: MessageContent!
    sent_at: DateTime failure_reason: String
  }
  type MessageEdge { cursor: String! node: Message! }
  type MessageConnection { edges: [MessageEdge!]! pageInfo: PageInfo! }
  type Broadcast implements Node & Timestamped {
    id: ID! name: String! state: BroadcastState! bot: Bot! scheduled_at: DateTime
    recipients: Int! delivered: Int! failed: Int! created_at: DateTime! updated_at: DateTime
  }
  type BroadcastEdge { cursor: String! node: Broadcast! }
  type BroadcastConnection { edges: [BroadcastEdge!]! pageInfo: PageInfo! }
  type Webhook implements Node { id: ID! url: String! events: [String!]! bot: Bot enabled: Boolean! }
  type Query {
    me: Member!
    account: Account!
    node(id: ID!): Node
    contact(id: ID!): Contact
    contacts(page: PageInput, filter: ContactFilter): ContactConnection! @cost(weight: 1)
    conversation(id: ID!): Conversation
    conversations(page: PageInput, filter: ConversationFilter): ConversationConnection!
    broadcasts(page: PageInput): BroadcastConnection!
    webhooks: [Webhook!]!
  }
  input ContactInput { name: String phone: String! email: String traits: JSON tags: [String!] }
  input SendMessageInput { conversation_id: ID! text: String template: String parameters: JSON }
  input BroadcastInput { name: String! bot_id: ID! template: String! audience: ContactFilter scheduled_at: DateTime }
  type Mutation {
    upsertContact(input: ContactInput!): Contact!
    deleteContact(id: ID!): Boolean!
    sendMessage(input: SendMessageInput!): Message!
    assignConversation(id: ID!, member_id: ID): Conversation!
    resolveConversation(id: ID!): Conversation!
    createBroadcast(input: BroadcastInput!): Broadcast!
    cancelBroadcast(id: ID!): Broadcast!
  }
  type Subscription {
    messageReceived(bot_id: ID): Message!
    conversationChanged(id: ID): Conversation!
  }
`)

describe("costOf: introspection", () => {
  it("the standard introspection query (GraphiQL's) costs well under 1000 and fits the shape limits", () => {
    for (
      const query of [
        getIntrospectionQuery(),
        getIntrospectionQuery({
          descriptions: true,
          specifiedByUrl: true,
          directiveIsRepeatable: true,
          schemaDescription: true,
          inputValueDeprecation: true,
          oneOf: true
        })
      ]
    ) {
      const document = parse(query)
      expect(validate(apiSchema, document)).toEqual([])
      expect(graphqlSync({ schema: apiSchema, source: query }).errors).toBeUndefined()
      const report = costOf(apiSchema, document, undefined, "IntrospectionQuery")
      expect(report.problems).toEqual([])
      // graphql 16.15: cost 220 (230 with every option), as many fields, depth 6
      expect(report.cost).toBeLessThan(MAX_COST / 2)
      expect(report.fields).toBeLessThan(MAX_FIELDS / 2)
      // ofType's nine links add no depth: __schema types fields args type ofType… name
      expect(report.depth).toBe(6)
    }
  })

  it("introspection fields are plain fields: 1 each plus their selection, __typename free", () => {
    const report = clean(costOf(apiSchema, parse(`{ __typename __type(name: "Contact") { name fields { name type { name ofType { name } } } } }`), undefined))
    expect(report.cost).toBe(8)
    expect(report.depth).toBe(4)
  })
})
