/**
 * What the simulator remembers per message, for each upstream it plays (RBM's half and the
 * WhatsApp half keep one each). A benchmark may push a million messages through it, in Herald's
 * own process, so the state is columnar: the message's id maps to a row number and each field is a
 * typed array indexed by it (about 150 bytes a message with the map and the recipient, against
 * twice that as an object per message). The last callback is not stored as text: it is rebuilt
 * byte for byte from (kind, sequence, time) when it is replayed. `K` is the upstream's kinds of
 * callback (RBM's events, Meta's statuses), 0 for none yet.
 */

const INITIAL_ROWS = 1_024

const grow = <T extends Uint8Array | Uint32Array | Float64Array>(column: T, rows: number): T => {
  const next = new (column.constructor as new(length: number) => T)(rows)
  next.set(column)
  return next
}

/** The row's last callback, as much as it takes to rebuild it. */
export interface LastCallback<K extends number> {
  readonly kind: K
  /** The sequence number it was posted under (RBM's event id, the wamid of the send it was about). */
  readonly seq: number
  /** Ledger time it was posted at. */
  readonly at: number
}

export class Ledger<K extends number> {
  private readonly epoch = Date.now()
  private readonly rows = new Map<string, number>()
  private size_ = 0
  // Senders (RBM agents, WhatsApp numbers) repeat across millions of messages: a row keeps the sender's index.
  private readonly senderIds: Array<string> = []
  private readonly senderRows = new Map<string, number>()
  private readonly recipients: Array<string> = []
  private capacity = INITIAL_ROWS
  private sendCounts = new Uint32Array(INITIAL_ROWS)
  private senders = new Uint32Array(INITIAL_ROWS)
  private delivered = new Uint8Array(INITIAL_ROWS)
  /** Ledger time of acceptance; -1 while no send of the message has been accepted. */
  private accepted = new Float64Array(INITIAL_ROWS)
  /** A small value of the upstream's own per message (WhatsApp's pricing category). */
  private tags = new Uint8Array(INITIAL_ROWS)
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

  /** Unix seconds of a ledger time, as Meta's webhooks carry them. */
  unixAt(ledgerTime: number): number {
    return Math.floor((this.epoch + ledgerTime) / 1_000)
  }

  nextSeq(): number {
    return ++this.seq
  }

  /**
   * Counts one send request carrying `messageId`, adding its row on the first; the row number.
   * `messageId` undefined (a WhatsApp send without `biz_opaque_callback_data`) gets a row nobody
   * can look up: its statuses still need one. A row keeps the sender and recipient of its first
   * send, or with `readdress` those of the latest.
   */
  recordSend(messageId: string | undefined, sender: string, recipient: string, readdress = false): number {
    let row = messageId === undefined ? undefined : this.rows.get(messageId)
    if (row === undefined) {
      row = this.size_++
      if (row === this.capacity) this.resize(this.capacity * 2)
      if (messageId !== undefined) this.rows.set(messageId, row)
      this.recipients.push(recipient)
      this.senders[row] = this.senderRow(sender)
      this.accepted[row] = -1
    } else if (readdress) {
      this.recipients[row] = recipient
      this.senders[row] = this.senderRow(sender)
    }
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

  recipientOf(row: number): string {
    return this.recipients[row]!
  }

  senderOf(row: number): string {
    return this.senderIds[this.senders[row]!]!
  }

  tagOf(row: number): number {
    return this.tags[row]!
  }

  setTag(row: number, tag: number): void {
    this.tags[row] = tag
  }

  /** The row's last callback, for replay. */
  lastOf(row: number): LastCallback<K> {
    return { kind: this.lastKinds[row]! as K, seq: this.lastSeqs[row]!, at: this.lastAts[row]! }
  }

  setLast(row: number, kind: K, seq: number, at: number): void {
    this.lastKinds[row] = kind
    this.lastSeqs[row] = seq
    this.lastAts[row] = at
  }

  private senderRow(sender: string): number {
    let row = this.senderRows.get(sender)
    if (row === undefined) {
      row = this.senderIds.length
      this.senderIds.push(sender)
      this.senderRows.set(sender, row)
    }
    return row
  }

  private resize(capacity: number): void {
    this.capacity = capacity
    this.sendCounts = grow(this.sendCounts, capacity)
    this.senders = grow(this.senders, capacity)
    this.delivered = grow(this.delivered, capacity)
    this.accepted = grow(this.accepted, capacity)
    this.tags = grow(this.tags, capacity)
    this.lastKinds = grow(this.lastKinds, capacity)
    this.lastSeqs = grow(this.lastSeqs, capacity)
    this.lastAts = grow(this.lastAts, capacity)
  }
}
