/**
 * What the simulator remembers per messageId. A benchmark may push a million messages through
 * it, in Herald's own process, so the state is columnar: the messageId maps to a row number and
 * each field is a typed array indexed by it (about 150 bytes a message with the map and the phone
 * number, against twice that as an object per message). The last callback is not stored as text:
 * it is rebuilt byte for byte from (kind, sequence, time) when it is replayed.
 */

export const EventKind = { None: 0, Delivered: 1, Read: 2, Expired: 3 } as const
export type EventKind = (typeof EventKind)[keyof typeof EventKind]

const INITIAL_ROWS = 1_024

const grow = <T extends Uint8Array | Uint32Array | Float64Array>(column: T, rows: number): T => {
  const next = new (column.constructor as new(length: number) => T)(rows)
  next.set(column)
  return next
}

export class Ledger {
  private readonly epoch = Date.now()
  private readonly rows = new Map<string, number>()
  // Agent ids repeat across millions of messages: a row keeps the agent's number.
  private readonly agentIds: Array<string> = []
  private readonly agentRows = new Map<string, number>()
  private readonly phones: Array<string> = []
  private capacity = INITIAL_ROWS
  private sendCounts = new Uint32Array(INITIAL_ROWS)
  private delivered = new Uint8Array(INITIAL_ROWS)
  /** Ledger time of acceptance; -1 while no send of the message has been accepted. */
  private accepted = new Float64Array(INITIAL_ROWS)
  private agents = new Uint32Array(INITIAL_ROWS)
  private lastKinds = new Uint8Array(INITIAL_ROWS)
  private lastSeqs = new Uint32Array(INITIAL_ROWS)
  private lastAts = new Float64Array(INITIAL_ROWS)
  private seq = 0
  private isoCachedAt = -1
  private isoCached = ""
  sends = 0
  deliveries = 0
  inbound = 0

  /** Ledger time: milliseconds since the ledger started. */
  now(): number {
    return Date.now() - this.epoch
  }

  /** RFC 3339 of a ledger time; events of one millisecond share the formatting. */
  isoAt(ledgerTime: number): string {
    if (ledgerTime !== this.isoCachedAt) {
      this.isoCachedAt = ledgerTime
      this.isoCached = new Date(this.epoch + ledgerTime).toISOString()
    }
    return this.isoCached
  }

  nextSeq(): number {
    return ++this.seq
  }

  /** Counts one send request carrying `messageId`, adding its row on the first; the row number. */
  recordSend(messageId: string, phone: string, agentId: string): number {
    let row = this.rows.get(messageId)
    if (row === undefined) {
      row = this.rows.size
      if (row === this.capacity) this.resize(this.capacity * 2)
      this.rows.set(messageId, row)
      this.phones.push(phone)
      this.agents[row] = this.agentRow(agentId)
      this.accepted[row] = -1
    }
    this.sendCounts[row]!++
    this.sends++
    return row
  }

  rowOf(messageId: string): number | undefined {
    return this.rows.get(messageId)
  }

  get size(): number {
    return this.rows.size
  }

  sendsOf(row: number): number {
    return this.sendCounts[row]!
  }

  deliveriesOf(row: number): number {
    return this.delivered[row]!
  }

  acceptedAt(row: number): number | undefined {
    const at = this.accepted[row]!
    return at < 0 ? undefined : at
  }

  accept(row: number, at: number): void {
    this.accepted[row] = at
  }

  /** It reached the recipient: at most once per message. */
  recordDelivery(row: number): void {
    if (this.delivered[row] === 1) return
    this.delivered[row] = 1
    this.deliveries++
  }

  phoneOf(row: number): string {
    return this.phones[row]!
  }

  agentOf(row: number): string {
    return this.agentIds[this.agents[row]!]!
  }

  /** The row's last callback, for replay. */
  lastOf(row: number): { readonly kind: EventKind; readonly seq: number; readonly at: number } {
    return { kind: this.lastKinds[row]! as EventKind, seq: this.lastSeqs[row]!, at: this.lastAts[row]! }
  }

  setLast(row: number, kind: EventKind, seq: number, at: number): void {
    this.lastKinds[row] = kind
    this.lastSeqs[row] = seq
    this.lastAts[row] = at
  }

  private agentRow(agentId: string): number {
    let row = this.agentRows.get(agentId)
    if (row === undefined) {
      row = this.agentIds.length
      this.agentIds.push(agentId)
      this.agentRows.set(agentId, row)
    }
    return row
  }

  private resize(capacity: number): void {
    this.capacity = capacity
    this.sendCounts = grow(this.sendCounts, capacity)
    this.delivered = grow(this.delivered, capacity)
    this.accepted = grow(this.accepted, capacity)
    this.agents = grow(this.agents, capacity)
    this.lastKinds = grow(this.lastKinds, capacity)
    this.lastSeqs = grow(this.lastSeqs, capacity)
    this.lastAts = grow(this.lastAts, capacity)
  }
}
