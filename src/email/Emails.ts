import { Effect } from "effect"
import { idFor } from "../domain/requestKey.ts"
import { ActorClient } from "../actors/runtime/index.ts"
import { FieldIssue, InvalidRequest, NotFound, ServiceUnavailable, describeIssues } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { EmailMessagesRepo } from "./EmailMessagesRepo.ts"
import type { PagePosition } from "../storage/pageCursor.ts"
import { parseAddress } from "./addresses.ts"
import { ConfigurationSets } from "./ConfigurationSets.ts"
import { CursorPages } from "./cursorPage.ts"
import { EmailTemplates } from "./EmailTemplates.ts"
import { Identities } from "./Identities.ts"
import { MailAccept, MailerKind } from "./MailerKind.ts"
import type { EventType } from "./model.ts"
import { Partners } from "./Partners.ts"
import { render } from "./renderTemplate.ts"

/** SES's limit of recipients (to, cc and bcc together) per message. */
export const MAX_RECIPIENTS = 50

/**
 * The most a message may hold, its subject, text and html (after a template is filled) and its
 * tags together, as the mailer receives it: the send travels to the partner's mailer as one
 * JetStream message, and NATS takes 1 MB at most. Past it the send is a 400 naming the field,
 * not a 503 from the bus.
 */
export const MESSAGE_MAX_BYTES = 768 * 1024

const sizeProblem = (input: SendInput, body: { readonly subject: string; readonly text: string | null; readonly html: string | null }) => {
  const bytes = Buffer.byteLength(JSON.stringify([body.subject, body.text, body.html, input.tags ?? null]))
  if (bytes <= MESSAGE_MAX_BYTES) return undefined
  const path = input.template !== undefined ? "template.data" : (body.html?.length ?? 0) >= (body.text?.length ?? 0) ? "html" : "text"
  return new FieldIssue({
    path,
    message: `makes a message of ${Math.ceil(bytes / 1024)} KB (subject, text, html and tags together, a template filled); Herald relays messages of up to ${MESSAGE_MAX_BYTES / 1024} KB`
  })
}

export interface SendInput {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly cc?: ReadonlyArray<string> | undefined
  readonly bcc?: ReadonlyArray<string> | undefined
  readonly reply_to?: string | ReadonlyArray<string> | undefined
  readonly subject?: string | undefined
  readonly text?: string | undefined
  readonly html?: string | undefined
  readonly template?: { readonly name: string; readonly data: Readonly<Record<string, unknown>> } | undefined
  readonly configuration_set?: string | undefined
  readonly tags?: Readonly<Record<string, string>> | undefined
}

/** Addresses of one field, each parsed; the issues name `field[i]`. */
const addressesOf = (field: string, raw: ReadonlyArray<string>, issues: Array<FieldIssue>) =>
  raw.flatMap((text, i) => {
    const address = parseAddress(text)
    if (address === undefined) issues.push(new FieldIssue({ path: raw.length === 1 && field === "reply_to" ? field : `${field}[${i}]`, message: "is not an e-mail address" }))
    return address === undefined ? [] : [address]
  })

/**
 * POST /emails and the reads of what happened to mail (GET /emails/{id}, GET /events). A send is
 * checked here (addresses, content, template, identities, sandbox) and handed to the partner's
 * `mailer`, which alone counts it against the daily quota and answers once it is recorded.
 */
export class Emails extends Effect.Service<Emails>()("herald/email/Emails", {
  effect: Effect.gen(function*() {
    const repo = yield* EmailMessagesRepo
    const client = yield* ActorClient
    const partners = yield* Partners
    const identities = yield* Identities
    const templates = yield* EmailTemplates
    const sets = yield* ConfigurationSets
    const pages = yield* CursorPages

    const content = (partnerId: string, input: SendInput, issues: Array<FieldIssue>) =>
      Effect.gen(function*() {
        if (input.template !== undefined) {
          if (input.subject !== undefined || input.text !== undefined || input.html !== undefined) {
            issues.push(new FieldIssue({ path: "template", message: "comes instead of subject, text and html, not with them" }))
            return undefined
          }
          const template = yield* templates.find(partnerId, input.template.name)
          if (template === undefined) {
            issues.push(new FieldIssue({ path: "template.name", message: `no template named ${input.template.name}` }))
            return undefined
          }
          const rendered = render(template, input.template.data)
          if ("problem" in rendered) {
            issues.push(new FieldIssue({ path: "template.data", message: rendered.problem }))
            return undefined
          }
          return rendered
        }
        if (input.subject === undefined || input.subject.trim() === "") issues.push(new FieldIssue({ path: "subject", message: "is required (or a template)" }))
        if (input.text === undefined && input.html === undefined) issues.push(new FieldIssue({ path: "text", message: "text or html is required (or a template)" }))
        return { subject: (input.subject ?? "").replace(/[\r\n]+/g, " "), text: input.text ?? null, html: input.html ?? null }
      })

    const send = (partnerId: string, input: SendInput) =>
      Effect.gen(function*() {
        const issues: Array<FieldIssue> = []
        const from = parseAddress(input.from)
        if (from === undefined) issues.push(new FieldIssue({ path: "from", message: "is not an e-mail address" }))
        const to = addressesOf("to", input.to, issues)
        const cc = addressesOf("cc", input.cc ?? [], issues)
        const bcc = addressesOf("bcc", input.bcc ?? [], issues)
        const replyTo = addressesOf("reply_to", typeof input.reply_to === "string" ? [input.reply_to] : input.reply_to ?? [], issues)
        const recipients = [...new Set([...to, ...cc, ...bcc])]
        if (input.to.length + (input.cc ?? []).length + (input.bcc ?? []).length === 0) issues.push(new FieldIssue({ path: "to", message: "needs at least one recipient" }))
        if (recipients.length > MAX_RECIPIENTS) issues.push(new FieldIssue({ path: "to", message: `to, cc and bcc together may hold at most ${MAX_RECIPIENTS} recipients` }))
        const body = yield* content(partnerId, input, issues)
        const configSetId = input.configuration_set === undefined ? null : (yield* sets.idOf(partnerId, input.configuration_set)) ?? null
        if (input.configuration_set !== undefined && configSetId === null) {
          issues.push(new FieldIssue({ path: "configuration_set", message: `no configuration set named ${input.configuration_set}` }))
        }
        if (body !== undefined) {
          const problem = sizeProblem(input, body)
          if (problem !== undefined) issues.push(problem)
        }
        if (issues.length > 0 || from === undefined || body === undefined) return yield* new InvalidRequest({ message: describeIssues(issues), errors: issues })

        const partner = yield* Effect.orDie(partners.current(partnerId))
        const verified = yield* identities.verifiedAmong(partnerId, partner.productionAccess ? [from] : [from, ...recipients])
        if (!verified.has(from)) return yield* InvalidRequest.single("from", `${from} is not a verified identity of this partner (POST /identities)`)
        if (!partner.productionAccess) {
          const unverified = recipients.find((r) => !verified.has(r))
          if (unverified !== undefined) {
            return yield* InvalidRequest.single(
              "to",
              `${unverified} is not a verified identity: in the sandbox every recipient must be one until production access is granted (POST /production-access)`
            )
          }
        }
        const messageId = yield* idFor("email-send")
        yield* client.ask(MailerKind, partnerId, new MailAccept({
          messageId,
          from,
          to,
          cc,
          bcc,
          replyTo,
          subject: body.subject,
          text: body.text,
          html: body.html,
          configSetId,
          tags: input.tags ?? null,
          recipients
        })).pipe(
          Effect.catchTags({
            AskTimeout: () => new ServiceUnavailable({ message: "the mailer did not answer in time; the send may still go out" }),
            CommandParked: () => new ServiceUnavailable({ message: "the mailer could not record the send" }),
            NatsUnavailable: () => new ServiceUnavailable({ message: "the message bus is unavailable" }),
            InvalidActorKey: (e) => Effect.die(e)
          })
        )
        return messageId
      })

    const get = (partnerId: string, messageId: string) =>
      Effect.gen(function*() {
        const row = isUuid(messageId) ? yield* repo.findMessage(partnerId, messageId) : undefined
        if (row === undefined) return yield* new NotFound({ message: `no message ${messageId}` })
        const events = yield* repo.eventsOf(messageId)
        return { message: row, events }
      })

    const events = (
      partnerId: string,
      query: { readonly limit?: number | undefined; readonly next_cursor?: string | undefined; readonly type?: EventType | undefined; readonly message_id?: string | undefined }
    ) =>
      // The filters are part of the list a cursor belongs to: a cursor of one filter is not another's.
      pages.page(
        { list: `events\n${query.type ?? ""}\n${query.message_id ?? ""}`, partnerId },
        query,
        (after: PagePosition | undefined, take: number) => repo.eventsPage(partnerId, { type: query.type, messageId: query.message_id }, after, take),
        (row) => ({ createdAt: row.createdAt, id: row.eventId })
      )

    return { send, get, events } as const
  }),
  dependencies: [EmailMessagesRepo.Default, Partners.Default, Identities.Default, EmailTemplates.Default, ConfigurationSets.Default, CursorPages.Default]
}) {}
