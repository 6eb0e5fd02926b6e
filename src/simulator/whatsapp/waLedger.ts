/**
 * What the WhatsApp half remembers per Herald message id (`biz_opaque_callback_data`). Columnar
 * like the RBM ledger (../ledger.ts) for the same reason, a million sends in a benchmark: the id
 * maps to a row, each field is a typed array. The last status webhook is not kept as text but
 * rebuilt byte for byte from (status, wamid sequence, time) when it is replayed.
 */

export const WaStatus = { None: 0, Sent: 1, Delivered: 2, Read: 3, Failed: 4 } as const
export type WaStatus = (typeof WaStatus)[keyof typeof WaStatus]

/** What Meta bills a message as; `service` is a free-form message inside the window. */
export const PRICING_CATEGORIES = ["service", "utility", "marketing", "authentication"] as const
export type PricingCategory = (typeof PRICING_CATEGORIES)[number]

const INITIAL_ROWS = 1_024

const grow = <T extends Uint8Array | Uint32Array | Float64Array>(column: T, rows: number): T => {
  const next = new (column.constructor as new(length: number) => T)(rows)
  next.set(column)
  return next
}

/** The row's last status webhook, as much as it takes to rebuild it. */
export interface LastStatus {
  readonly status: WaStatus
  /** Sequence of the send (wamid) it was about. */
  readonly wamidSeq: number
  /** Ledger time it was posted at. */
  readonly at: number
}

export class WaLedger {
  private readonly epoch = Date.now()
  private readonly rows = new Map<string, number>()
  private size_ = 0
  // A few sending numbers serve millions of messages: a row keeps the number's index.
  private readonly numberIds: Array<string> = []
  private readonly numberRows = new Map<string, number>()
  private readonly recipients: Array<string> = []
  private capacity = INITIAL_ROWS
  private sendCounts = new Uint32Array(INITIAL_ROWS)
  private numbers = new Uint32Array(INITIAL_ROWS)
  private categories = new Uint8Array(INITIAL_ROWS)
  private lastStatuses = new Uint8Array(INITIAL_ROWS)
  private lastWamids = new Uint32Array(INITIAL_ROWS)
  private lastAts = new Float64Array(INITIAL_ROWS)
  private wamidSeq = 0
  sends = 0

  /** Ledger time: milliseconds since the ledger started. */
  now(): number {
    return Date.now() - this.epoch
  }

  /** Unix seconds of a ledger time, as Meta's webhooks carry them. */
  unixAt(ledgerTime: number): number {
    return Math.floor((this.epoch + ledgerTime) / 1_000)
  }

  nextWamidSeq(): number {
    return ++this.wamidSeq
  }

  /**
   * Counts one send request, adding its row on the first. `messageId` undefined (a send without
   * `biz_opaque_callback_data`) gets a row nobody can look up: its statuses still need one.
   */
  recordSend(messageId: string | undefined, phoneNumberId: string, recipient: string, category: PricingCategory): number {
    let row = messageId === undefined ? undefined : this.rows.get(messageId)
    if (row === undefined) {
      row = this.size_++
      if (row === this.capacity) this.resize(this.capacity * 2)
      if (messageId !== undefined) this.rows.set(messageId, row)
      this.recipients.push(recipient)
    } else {
      this.recipients[row] = recipient
    }
    this.numbers[row] = this.numberRow(phoneNumberId)
    this.categories[row] = PRICING_CATEGORIES.indexOf(category)
    this.sendCounts[row]!++
    this.sends++
    return row
  }

  rowOf(messageId: string): number | undefined {
    return this.rows.get(messageId)
  }

  /** Messages seen (rows), with or without an id. */
  get size(): number {
    return this.size_
  }

  sendsOf(row: number): number {
    return this.sendCounts[row]!
  }

  recipientOf(row: number): string {
    return this.recipients[row]!
  }

  phoneNumberIdOf(row: number): string {
    return this.numberIds[this.numbers[row]!]!
  }

  categoryOf(row: number): PricingCategory {
    return PRICING_CATEGORIES[this.categories[row]!]!
  }

  lastOf(row: number): LastStatus {
    return { status: this.lastStatuses[row]! as WaStatus, wamidSeq: this.lastWamids[row]!, at: this.lastAts[row]! }
  }

  setLast(row: number, status: WaStatus, wamidSeq: number, at: number): void {
    this.lastStatuses[row] = status
    this.lastWamids[row] = wamidSeq
    this.lastAts[row] = at
  }

  private numberRow(phoneNumberId: string): number {
    let row = this.numberRows.get(phoneNumberId)
    if (row === undefined) {
      row = this.numberIds.length
      this.numberIds.push(phoneNumberId)
      this.numberRows.set(phoneNumberId, row)
    }
    return row
  }

  private resize(capacity: number): void {
    this.capacity = capacity
    this.sendCounts = grow(this.sendCounts, capacity)
    this.numbers = grow(this.numbers, capacity)
    this.categories = grow(this.categories, capacity)
    this.lastStatuses = grow(this.lastStatuses, capacity)
    this.lastWamids = grow(this.lastWamids, capacity)
    this.lastAts = grow(this.lastAts, capacity)
  }
}
