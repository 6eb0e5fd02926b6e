import { Effect, Schema } from "effect"
import { randomInt } from "node:crypto"
import { ChangeFeed } from "../../storage/ChangeFeed.ts"
import { makeReadCache } from "../../storage/ReadCache.ts"
import { isUniqueViolation } from "../../storage/sqlState.ts"
import { type WaNumber, WaNumbersRepo } from "./WaNumbersRepo.ts"

export type { WaNumber } from "./WaNumbersRepo.ts"

/** Meta's default messaging tier: 80 messages a second per number. */
export const WA_THROUGHPUT_DEFAULT = 80

export class WaNumberTaken extends Schema.TaggedError<WaNumberTaken>()("WaNumberTaken", { message: Schema.String }) {}

/** Meta's ids are 15 or 16 decimal digits; Herald makes its own of the same form for the numbers it onboards. */
const metaId = () => `1${Array.from({ length: 14 }, () => randomInt(10)).join("")}`

/**
 * An account's WhatsApp numbers, onboarded by an operator (`herald admin create-wa-number`). The
 * first is the account's default sender. Read on every public send and every Meta webhook, so kept
 * in memory and dropped by the change feed when a number of the account changes.
 */
export class WaNumbers extends Effect.Service<WaNumbers>()("herald/whatsapp/WaNumbers", {
  scoped: Effect.gen(function*() {
    const repo = yield* WaNumbersRepo
    const byAccount = yield* makeReadCache<ReadonlyArray<WaNumber>>({ tables: ["wa_numbers", "accounts"], capacity: 100_000 })
    const byId = yield* makeReadCache<WaNumber>({ tables: ["wa_numbers", "accounts"], capacity: 100_000 })

    const list = (accountId: string) =>
      Effect.map(
        byAccount.get(accountId, () =>
          Effect.map(repo.ofAccount(accountId), (rows) => ({ accountId, value: rows }))),
        (rows) => rows ?? []
      ).pipe(Effect.orDie)

    /** The number by Meta's id, whichever account has it (webhooks name the number, not the account). */
    const find = (phoneNumberId: string) =>
      byId.get(phoneNumberId, () =>
        Effect.map(repo.find(phoneNumberId), (row) => row && { accountId: row.accountId, value: row })).pipe(Effect.orDie)

    /** The number an account sends from: the one asked for (when it is the account's), else the default. */
    const sender = (accountId: string, phoneNumberId: string | undefined) =>
      Effect.map(list(accountId), (numbers) =>
        phoneNumberId === undefined ? numbers.find((n) => n.isDefault) : numbers.find((n) => n.phoneNumberId === phoneNumberId))

    const create = (input: { accountId: string; phone: string; displayName: string | null; throughput: number }) =>
      Effect.gen(function*() {
        const phoneNumberId = metaId()
        // Numbers of one account share its WhatsApp Business Account.
        const wabaId = (yield* repo.wabaOf(input.accountId)) ?? metaId()
        return yield* repo.insert({ phoneNumberId, wabaId, ...input }).pipe(
          Effect.catchIf(isUniqueViolation, () => new WaNumberTaken({ message: `${input.phone} is already a WhatsApp number of an account` }))
        )
      })

    const setThroughput = (phoneNumberId: string, throughput: number) => repo.setThroughput(phoneNumberId, throughput)

    return { list, find, sender, create, setThroughput } as const
  }),
  dependencies: [ChangeFeed.Default, WaNumbersRepo.Default]
}) {}
