import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { ActorClient } from "../actors/runtime/index.ts"
import { describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { type CapiEventInput, capiEventUid, type CheckedEvent, checkCapiEvent, metaEvent } from "./capiEvent.ts"
import { CapiFlush, CapiKind, CapiQueue, CapiRedrive } from "./CapiKind.ts"
import { CustomersRepo } from "../customers/CustomersRepo.ts"
import { CapiConfigsRepo } from "./CapiConfigsRepo.ts"
import { CapiEventsRepo } from "./CapiEventsRepo.ts"
import { CapiNotConfigured } from "./errors.ts"

/**
 * Conversions for Meta (docs/conversions.md): events are checked and their user data hashed here,
 * on the API node, then handed to the account's `capi` actor, which batches them to Meta. The
 * answer is 202 once JetStream holds them; an event is never lost after that.
 */
export class Conversions extends Effect.Service<Conversions>()("herald/conversions/Conversions", {
  effect: Effect.gen(function*() {
    const client = yield* ActorClient
    const customers = yield* CustomersRepo
    const configs = yield* CapiConfigsRepo
    const stored = yield* CapiEventsRepo

    /** Phones of the account's customers named by id (an unknown id is a 400 naming it). */
    const phonesOf = (accountId: string, events: ReadonlyArray<{ readonly checked: CheckedEvent; readonly at: string }>, issues: Array<FieldIssue>) =>
      Effect.gen(function*() {
        const ids = [...new Set(events.flatMap((e) => (e.checked.customerId !== undefined && isUuid(e.checked.customerId) ? [e.checked.customerId] : [])))]
        const phones = yield* customers.phonesOf(accountId, ids)
        for (const { checked, at } of events) {
          if (checked.customerId !== undefined && !phones.has(checked.customerId)) {
            issues.push(new FieldIssue({ path: at === "" ? "customer_id" : `${at}.customer_id`, message: "is not a customer of this account" }))
          }
        }
        return phones
      })

    /** Whether the account has a CAPI configuration, and its default number's WABA: one read per request. */
    const targetOf = configs.targetOf

    const accept = (account: SecretKeyAccount, inputs: ReadonlyArray<CapiEventInput>, batch: boolean) =>
      Effect.gen(function*() {
        const target = yield* targetOf(account.accountId)
        if (!target.configured) {
          return yield* new CapiNotConfigured({ message: "the Conversions API is not configured: the owner sets it with PUT /api/v1/app/meta-ads/capi/config" })
        }
        const nowSec = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const issues: Array<FieldIssue> = []
        const checked = inputs.flatMap((input, i) => {
          const at = batch ? `events[${i}]` : ""
          const event = checkCapiEvent(input, nowSec, at, randomUUID, issues)
          return event === undefined ? [] : [{ checked: event, at }]
        })
        const phones = yield* phonesOf(account.accountId, checked, issues)
        if (issues.length > 0) return yield* new InvalidRequest({ message: describeIssues(issues), errors: issues })
        const events = checked.map(({ checked: event }) => ({
          uid: capiEventUid(account.accountId, event.eventName, event.eventId),
          eventName: event.eventName,
          eventId: event.eventId,
          payload: metaEvent(event, event.phone ?? (event.customerId !== undefined ? phones.get(event.customerId) : undefined), target.wabaId ?? undefined)
        }))
        const uids = events.map((e) => e.uid)
        yield* client.send(CapiKind, account.accountId, new CapiQueue({ events }), { msgId: `capi-${uids.length === 1 ? uids[0] : randomUUID()}` }).pipe(Effect.orDie)
        return uids
      })

    /** One event accepted: its id (the uid Herald gives the event_name + event_id pair). */
    const one = (account: SecretKeyAccount, input: CapiEventInput) => Effect.map(accept(account, [input], false), ([id]) => id!)

    /** A batch accepted: the events' ids, in order. */
    const many = (account: SecretKeyAccount, inputs: ReadonlyArray<CapiEventInput>) => accept(account, inputs, true)

    const get = (account: SecretKeyAccount, id: string) =>
      Effect.gen(function*() {
        const row = yield* stored.find(account.accountId, id)
        // The actor stores an event a few milliseconds after the 202: until then it is not found.
        if (row === undefined) return yield* new NotFound({ message: `no conversion event ${id}` })
        return row
      })

    /** Queues the account's failed events again: how many there were. */
    const redrive = (account: SecretKeyAccount) =>
      Effect.gen(function*() {
        const failed = yield* stored.countFailed(account.accountId)
        yield* client.send(CapiKind, account.accountId, new CapiRedrive()).pipe(Effect.orDie)
        return failed
      })

    /** After the configuration changes: what waited for it goes now. */
    const nudge = (accountId: string) => client.send(CapiKind, accountId, new CapiFlush()).pipe(Effect.orDie, Effect.asVoid)

    return { one, many, get, redrive, nudge } as const
  }),
  dependencies: [ActorClient.Default, CustomersRepo.Default, CapiConfigsRepo.Default, CapiEventsRepo.Default]
}) {}
