import { Either } from "effect"
import { InvalidRequest } from "../domain/errors.ts"
import { contactOfCsv, contactOfJson, csvColumns, type CsvColumns, type ParsedRow } from "./contactRow.ts"
import { RECORD_MAX_CHARS } from "./importLimits.ts"

/**
 * Incremental readers of the three import formats (docs/contact-lists.md). Each takes the body's
 * text piece by piece, cut anywhere (inside a quoted field, an escape, a line ending), and answers
 * the rows each piece completed; it keeps at most one unfinished record between pieces, so a body
 * of any size is read in constant memory. A body it cannot read further (broken syntax, a record
 * over RECORD_MAX_CHARS, a CSV without a phone column) is a 400 naming where it broke: the import
 * fails as a whole. A row whose shape is wrong is only counted invalid (see contactRow.ts).
 *
 * Hand-written rather than a library's: each is a small state machine fed by the Effect stream of
 * the request, with no Node stream in between whose end could race an upstream failure — an
 * import must never commit a body that was cut short.
 */
export interface RowReader {
  /** The rows completed by this piece of text, or why the body cannot be read. */
  readonly push: (text: string) => Either.Either<ReadonlyArray<ParsedRow>, InvalidRequest>
  /** The body ended: the last rows, or why it is incomplete. */
  readonly end: () => Either.Either<ReadonlyArray<ParsedRow>, InvalidRequest>
}

export type ImportFormat = "json" | "ndjson" | "csv"

/**
 * What a data row becomes once a reader has cut it out: a contact-list contact by default; an
 * import of other rows (customers, src/customers/customerRows.ts) reads the same formats with its
 * own decoder.
 */
export interface RowDecoder {
  readonly json: (row: number, value: unknown) => ParsedRow
  readonly csv: (row: number, columns: CsvColumns, fields: ReadonlyArray<string>) => ParsedRow
}

export const LIST_ROWS: RowDecoder = { json: contactOfJson, csv: contactOfCsv }

export const readerFor = (format: ImportFormat, decoder: RowDecoder = LIST_ROWS): RowReader =>
  format === "json" ? new JsonReader(decoder) : format === "ndjson" ? new NdjsonReader(decoder) : new CsvReader(decoder)

const broken = (path: string, message: string) => Either.left(InvalidRequest.single(path, message))
const tooLong = (path: string) => broken(path, `is longer than ${RECORD_MAX_CHARS} characters, the largest record an import takes`)

const TAB = 9, LF = 10, CR = 13, SPACE = 32, QUOTE = 34, COMMA = 44, COLON = 58, BACKSLASH = 92
const OPEN_BRACKET = 91, CLOSE_BRACKET = 93, OPEN_BRACE = 123, CLOSE_BRACE = 125, BOM = 0xfeff
const isSpace = (c: number) => c === SPACE || c === LF || c === CR || c === TAB

// ---------------------------------------------------------------------------------------------
// NDJSON: one JSON object a line; blank lines skipped; a trailing \r dropped.

export class NdjsonReader implements RowReader {
  constructor(private readonly decoder: RowDecoder = LIST_ROWS) {}

  private partial = ""
  private line = 0
  private row = 0
  private started = false

  push(text: string) {
    const out: Array<ParsedRow> = []
    let start = 0
    if (!this.started && text.length > 0) {
      this.started = true
      if (text.charCodeAt(0) === BOM) start = 1
    }
    for (;;) {
      const newline = text.indexOf("\n", start)
      if (newline < 0) {
        this.partial += text.slice(start)
        // The line number is the one being read.
        if (this.partial.length > RECORD_MAX_CHARS) return tooLong(`line ${this.line + 1}`)
        return Either.right(out)
      }
      const line = this.partial === "" ? text.slice(start, newline) : this.partial + text.slice(start, newline)
      this.partial = ""
      start = newline + 1
      const problem = this.take(line, out)
      if (problem !== undefined) return Either.left(problem)
    }
  }

  end() {
    const out: Array<ParsedRow> = []
    const last = this.partial
    this.partial = ""
    const problem = this.take(last, out)
    return problem === undefined ? Either.right(out) : Either.left(problem)
  }

  private take(raw: string, out: Array<ParsedRow>): InvalidRequest | undefined {
    this.line++
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
    if (line.trim() === "") return undefined
    if (line.length > RECORD_MAX_CHARS) return InvalidRequest.single(`line ${this.line}`, `is longer than ${RECORD_MAX_CHARS} characters, the largest record an import takes`)
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      return InvalidRequest.single(`line ${this.line}`, `is not valid JSON (${(error as Error).message})`)
    }
    out.push(this.decoder.json(++this.row, value))
    return undefined
  }
}

// ---------------------------------------------------------------------------------------------
// JSON: `{"contacts": [ … ]}`. The array's elements are cut out one at a time by tracking nesting
// and strings, then each is parsed by JSON.parse; other members of the object are read the same
// way and dropped.

const ROOT = 0, FIRST_KEY = 1, NEXT_KEY = 2, KEY = 3, COLON_NEXT = 4, VALUE = 5, FIRST_ELEMENT = 6, NEXT_ELEMENT = 7
const IN_VALUE = 8, AFTER_ELEMENT = 9, AFTER_MEMBER = 10, DONE = 11

export class JsonReader implements RowReader {
  constructor(private readonly decoder: RowDecoder = LIST_ROWS) {}

  private state = ROOT
  private key = ""
  private keyRaw = ""
  private escaped = false
  private contactsSeen = false
  private row = 0
  private started = false
  // The value being cut out: an element of contacts, or another member's value.
  private element = false
  private parts: Array<string> = []
  private length = 0
  private depth = 0
  private inString = false
  private bare = false
  private fresh = true

  push(text: string): Either.Either<ReadonlyArray<ParsedRow>, InvalidRequest> {
    const out: Array<ParsedRow> = []
    const n = text.length
    let i = 0
    if (!this.started && n > 0) {
      this.started = true
      if (text.charCodeAt(0) === BOM) i = 1
    }
    while (i < n) {
      const c = text.charCodeAt(i)
      switch (this.state) {
        case ROOT:
          if (isSpace(c)) i++
          else if (c === OPEN_BRACE) { this.state = FIRST_KEY; i++ }
          else return broken("body", "must be a JSON object with a contacts array")
          break
        case FIRST_KEY:
        case NEXT_KEY:
          if (isSpace(c)) i++
          else if (c === QUOTE) { this.state = KEY; this.keyRaw = ""; this.escaped = false; i++ }
          else if (c === CLOSE_BRACE && this.state === FIRST_KEY) { this.state = DONE; i++ }
          else return broken("body", "is not valid JSON: expected a member name")
          break
        case KEY: {
          let j = i
          for (; j < n; j++) {
            const d = text.charCodeAt(j)
            if (this.escaped) this.escaped = false
            else if (d === BACKSLASH) this.escaped = true
            else if (d === QUOTE) break
          }
          this.keyRaw += text.slice(i, j)
          if (this.keyRaw.length > RECORD_MAX_CHARS) return tooLong("a member name")
          if (j === n) {
            i = n
            break
          }
          try {
            this.key = JSON.parse(`"${this.keyRaw}"`) as string
          } catch {
            return broken("body", "is not valid JSON: a member name is malformed")
          }
          this.state = COLON_NEXT
          i = j + 1
          break
        }
        case COLON_NEXT:
          if (isSpace(c)) i++
          else if (c === COLON) { this.state = VALUE; i++ }
          else return broken("body", `is not valid JSON: expected : after "${this.key}"`)
          break
        case VALUE:
          if (isSpace(c)) i++
          else if (this.key === "contacts") {
            if (c !== OPEN_BRACKET) return broken("contacts", "must be an array")
            this.contactsSeen = true
            this.state = FIRST_ELEMENT
            i++
          } else this.startValue(false)
          break
        case FIRST_ELEMENT:
        case NEXT_ELEMENT:
          if (isSpace(c)) i++
          else if (c === CLOSE_BRACKET && this.state === FIRST_ELEMENT) { this.state = AFTER_MEMBER; i++ }
          else this.startValue(true)
          break
        case IN_VALUE: {
          const next = this.scan(text, i)
          if (next === undefined) {
            if (this.length > RECORD_MAX_CHARS) return tooLong(this.element ? `contacts[${this.row}]` : this.key)
            i = n
            break
          }
          i = next
          const problem = this.finishValue(out)
          if (problem !== undefined) return Either.left(problem)
          break
        }
        case AFTER_ELEMENT:
          if (isSpace(c)) i++
          else if (c === COMMA) { this.state = NEXT_ELEMENT; i++ }
          else if (c === CLOSE_BRACKET) { this.state = AFTER_MEMBER; i++ }
          else return broken(`contacts[${this.row - 1}]`, "is not valid JSON: expected , or ] after it")
          break
        case AFTER_MEMBER:
          if (isSpace(c)) i++
          else if (c === COMMA) { this.state = NEXT_KEY; i++ }
          else if (c === CLOSE_BRACE) { this.state = DONE; i++ }
          else return broken("body", "is not valid JSON: expected , or } after a member")
          break
        case DONE:
          if (isSpace(c)) i++
          else return broken("body", "has content after the JSON object")
          break
      }
    }
    return Either.right(out)
  }

  end(): Either.Either<ReadonlyArray<ParsedRow>, InvalidRequest> {
    if (this.state !== DONE) return broken("body", this.started ? "ends before the JSON object is complete" : "must be a JSON object with a contacts array")
    if (!this.contactsSeen) return broken("contacts", "is missing")
    return Either.right([])
  }

  private startValue(element: boolean) {
    this.element = element
    this.parts = []
    this.length = 0
    this.depth = 0
    this.inString = false
    this.escaped = false
    this.bare = false
    this.fresh = true
    this.state = IN_VALUE
  }

  /**
   * Reads the value from `i`: the index just past its end, or undefined when the text ran out
   * first (what was read is kept). A bare value (number, true, false, null, or garbage that
   * JSON.parse then refuses) ends before the first delimiter or space.
   */
  private scan(text: string, start: number): number | undefined {
    const n = text.length
    let i = start
    if (this.fresh) {
      this.fresh = false
      const c = text.charCodeAt(i)
      if (c === OPEN_BRACE || c === OPEN_BRACKET) { this.depth = 1; i++ }
      else if (c === QUOTE) { this.inString = true; i++ }
      else this.bare = true
    }
    for (; i < n; i++) {
      const c = text.charCodeAt(i)
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (c === BACKSLASH) this.escaped = true
        else if (c === QUOTE) {
          this.inString = false
          if (this.depth === 0) return this.keep(text, start, i + 1)
        }
      } else if (this.bare) {
        if (c === COMMA || c === CLOSE_BRACKET || c === CLOSE_BRACE || isSpace(c)) return this.keep(text, start, i)
      } else if (c === QUOTE) this.inString = true
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth++
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (--this.depth === 0) return this.keep(text, start, i + 1)
      }
    }
    this.parts.push(text.slice(start, n))
    this.length += n - start
    return undefined
  }

  private keep(text: string, start: number, end: number) {
    this.parts.push(text.slice(start, end))
    this.length += end - start
    return end
  }

  private finishValue(out: Array<ParsedRow>): InvalidRequest | undefined {
    const source = this.parts.length === 1 ? this.parts[0]! : this.parts.join("")
    this.parts = []
    if (source.length > RECORD_MAX_CHARS) {
      return InvalidRequest.single(this.element ? `contacts[${this.row}]` : this.key, `is longer than ${RECORD_MAX_CHARS} characters, the largest record an import takes`)
    }
    let value: unknown
    try {
      value = JSON.parse(source)
    } catch (error) {
      return InvalidRequest.single(this.element ? `contacts[${this.row}]` : this.key, `is not valid JSON (${(error as Error).message})`)
    }
    if (this.element) {
      out.push(this.decoder.json(++this.row, value))
      this.state = AFTER_ELEMENT
    } else this.state = AFTER_MEMBER
    return undefined
  }
}

// ---------------------------------------------------------------------------------------------
// CSV (RFC 4180): fields separated by commas, records by CRLF, LF or CR; a field in double quotes
// may hold commas, quotes (doubled) and line breaks. A quote inside an unquoted field is kept as a
// character (5'10", John "JJ" Smith); anything but a comma or a line break after a closing quote
// breaks the body. A record whose every cell is empty is skipped (spreadsheets end with such
// rows). The first record is the header (see csvColumns).

const FIELD_START = 0, UNQUOTED = 1, QUOTED = 2, QUOTE_SEEN = 3

export class CsvReader implements RowReader {
  constructor(private readonly decoder: RowDecoder = LIST_ROWS) {}

  private mode = FIELD_START
  private fields: Array<string> = []
  private fieldsLength = 0
  private pending = ""
  private skipLf = false
  private line = 1
  /** Where the open quoted field began, for the error when it is never closed. */
  private quoteLine = 1
  private started = false
  private columns: CsvColumns | undefined
  private row = 0

  push(text: string): Either.Either<ReadonlyArray<ParsedRow>, InvalidRequest> {
    const out: Array<ParsedRow> = []
    const n = text.length
    let i = 0
    if (!this.started && n > 0) {
      this.started = true
      if (text.charCodeAt(0) === BOM) i = 1
    }
    let seg = i
    while (i < n) {
      const c = text.charCodeAt(i)
      if (this.skipLf) {
        this.skipLf = false
        if (c === LF) {
          seg = ++i
          continue
        }
      }
      if (this.mode === QUOTED) {
        const quote = text.indexOf("\"", i)
        const stop = quote < 0 ? n : quote
        for (let k = text.indexOf("\n", i); k >= 0 && k < stop; k = text.indexOf("\n", k + 1)) this.line++
        if (quote < 0) {
          i = n
          break
        }
        this.pending += text.slice(seg, quote)
        seg = i = quote + 1
        this.mode = QUOTE_SEEN
      } else if (this.mode === QUOTE_SEEN) {
        if (c === QUOTE) {
          // A doubled quote inside a quoted field: one quote of the value; the field goes on.
          this.pending += "\""
          seg = ++i
          this.mode = QUOTED
        } else if (c === COMMA || c === LF || c === CR) {
          const problem = this.endField(this.pending, c, out)
          if (problem !== undefined) return Either.left(problem)
          seg = ++i
        } else return broken(`line ${this.line}`, "has characters after the closing quote of a field")
      } else if (this.mode === FIELD_START && c === QUOTE) {
        this.mode = QUOTED
        this.quoteLine = this.line
        this.pending = ""
        seg = ++i
      } else {
        let j = i
        let d = 0
        for (; j < n; j++) {
          d = text.charCodeAt(j)
          if (d === COMMA || d === LF || d === CR) break
        }
        if (j === n) {
          this.mode = UNQUOTED
          i = n
          break
        }
        const problem = this.endField(this.pending + text.slice(seg, j), d, out)
        if (problem !== undefined) return Either.left(problem)
        seg = i = j + 1
      }
    }
    if (seg < n) this.pending += text.slice(seg, n)
    if (this.pending.length + this.fieldsLength > RECORD_MAX_CHARS) return tooLong(`line ${this.line}`)
    return Either.right(out)
  }

  end(): Either.Either<ReadonlyArray<ParsedRow>, InvalidRequest> {
    if (this.mode === QUOTED) return broken(`line ${this.quoteLine}`, "has a quoted field that is never closed")
    const out: Array<ParsedRow> = []
    if (this.mode !== FIELD_START || this.fields.length > 0) {
      const problem = this.endField(this.pending, LF, out)
      if (problem !== undefined) return Either.left(problem)
    }
    if (this.columns === undefined) return broken("body", "is empty: a CSV import needs a header row with a phone column")
    return Either.right(out)
  }

  /** Ends the current field on `delimiter`: a comma starts the next; a line break ends the record. */
  private endField(value: string, delimiter: number, out: Array<ParsedRow>): InvalidRequest | undefined {
    this.fields.push(value)
    this.fieldsLength += value.length
    this.pending = ""
    this.mode = FIELD_START
    if (delimiter === COMMA) return undefined
    const fields = this.fields
    const length = this.fieldsLength
    const line = this.line
    this.fields = []
    this.fieldsLength = 0
    this.line++
    if (delimiter === CR) this.skipLf = true
    if (length > RECORD_MAX_CHARS) return InvalidRequest.single(`line ${line}`, `is longer than ${RECORD_MAX_CHARS} characters, the largest record an import takes`)
    if (fields.every((f) => f.trim() === "")) return undefined
    if (this.columns === undefined) {
      const columns = csvColumns(fields)
      if (typeof columns === "string") return InvalidRequest.single("header", columns)
      this.columns = columns
      return undefined
    }
    out.push(this.decoder.csv(++this.row, this.columns, fields))
    return undefined
  }
}
