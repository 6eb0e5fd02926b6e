import { buildSchema, GraphQLError, type GraphQLFieldResolver, GraphQLObjectType, GraphQLScalarType, type GraphQLSchema, Kind, type ValueNode } from "graphql"
import { resolvers } from "./resolvers.ts"
import { SDL } from "./schema.ts"
import { paymentResolvers, subscriptionResolvers } from "./subscriptions/resolvers.ts"
import { SUBSCRIPTION_SDL } from "./subscriptions/schema.ts"

const literalValue = (node: ValueNode, variables: Record<string, unknown> | null | undefined): unknown => {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return node.value
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value)
    case Kind.NULL:
      return null
    case Kind.LIST:
      return node.values.map((value) => literalValue(value, variables))
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((field) => [field.name.value, literalValue(field.value, variables)]))
    case Kind.VARIABLE:
      return variables?.[node.name.value]
    default:
      return undefined
  }
}

const scalars: Record<string, Partial<GraphQLScalarType>> = {
  DateTime: {
    serialize: (value) => new Date(value as string | Date).toISOString(),
    parseValue: (value) => {
      if (typeof value !== "string" || Number.isNaN(Date.parse(value))) throw new GraphQLError("must be an ISO 8601 date-time")
      return new Date(value)
    }
  },
  JSON: {
    serialize: (value) => value,
    parseValue: (value) => value,
    parseLiteral: literalValue
  }
}

/** Each request's answers of Query's fields, by field and arguments (keyed by the request's context). */
const rootAnswers = new WeakMap<object, Map<string, unknown>>()

/**
 * A Query field resolved once per request for the same arguments, as DataLoader caches a key:
 * 499 aliases of `wallet { balance }` (under the cost limit, each costing 2) read the wallet once,
 * not 499 times. graphql-js coerces arguments in the field's declared order, so equal arguments
 * print the same. Only Query's fields: they read; a mutation runs each time it is asked for.
 */
const oncePerRequest = (fieldName: string, resolve: GraphQLFieldResolver<unknown, object>): GraphQLFieldResolver<unknown, object> =>
  (parent, args, context, info) => {
    let answers = rootAnswers.get(context)
    if (answers === undefined) rootAnswers.set(context, answers = new Map())
    const key = `${fieldName}(${JSON.stringify(args)})`
    if (!answers.has(key)) answers.set(key, resolve(parent, args, context, info))
    return answers.get(key)
  }

/** The SDL with Herald's resolvers and scalars: built once per node. */
export const makeExecutableSchema = (): GraphQLSchema => {
  const schema = buildSchema(SDL + SUBSCRIPTION_SDL)
  for (const [typeName, fields] of Object.entries({ ...resolvers, Payment: paymentResolvers })) {
    const type = schema.getType(typeName)
    if (!(type instanceof GraphQLObjectType)) throw new Error(`resolvers for ${typeName}, which the schema has not as an object type`)
    const declared = type.getFields()
    for (const [fieldName, resolve] of Object.entries(fields)) {
      const field = declared[fieldName]
      if (field === undefined) throw new Error(`a resolver for ${typeName}.${fieldName}, which the schema does not declare`)
      field.resolve = typeName === "Query" ? oncePerRequest(fieldName, resolve as GraphQLFieldResolver<unknown, object>) : resolve as typeof field.resolve
    }
  }
  const subscription = schema.getSubscriptionType()!.getFields()
  for (const [fieldName, { resolve, subscribe }] of Object.entries(subscriptionResolvers)) {
    const field = subscription[fieldName]
    if (field === undefined) throw new Error(`a subscription resolver for ${fieldName}, which the schema does not declare`)
    field.subscribe = subscribe as typeof field.subscribe
    field.resolve = resolve as typeof field.resolve
  }
  for (const [name, behaviour] of Object.entries(scalars)) Object.assign(schema.getType(name) as GraphQLScalarType, behaviour)
  return schema
}
