// Numbers and dates for people: in the browser's locale, with the exact ISO time in a title.

const numberFormat = new Intl.NumberFormat()
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })
const hourFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" })
const shortHourFormat = new Intl.DateTimeFormat(undefined, { hour: "numeric" })

export const formatNumber = (n: number): string => numberFormat.format(n)

export const formatMoney = (amount: number, currency: string): string => {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(amount)
  } catch {
    return `${numberFormat.format(amount)} ${currency}`
  }
}

/** 0.9731 → "97.3%"; null → "—". */
export const formatRate = (rate: number | null): string =>
  rate === null ? "—" : `${(Math.round(rate * 1000) / 10).toLocaleString(undefined, { maximumFractionDigits: 1 })}%`

export const formatMs = (ms: number | null): string => (ms === null ? "—" : `${formatNumber(Math.round(ms))} ms`)

export const formatDateTime = (iso: string): string => {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : dateTimeFormat.format(date)
}

export const formatHour = (iso: string): string => {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : hourFormat.format(date)
}

/** The hour alone ("10 PM", "22"), for an axis with little room. */
export const formatShortHour = (iso: string): string => {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : shortHourFormat.format(date)
}

/**
 * A URL that wraps between its parts on a narrow screen: a break opportunity (<wbr>) after each
 * / . ? & = # and before none of "://", so a line ends where a person would break the address,
 * not inside a word of it (the `.url` style breaks inside a part only when it alone is wider than
 * the line).
 */
export const UrlText = ({ url }: { readonly url: string }) => {
  const parts = url.split(/(?<=[/.?&=#])(?!\/)/)
  return <>{parts.map((part, i) => (i === 0 ? part : [<wbr key={`w${i}`} />, part]))}</>
}

/** A date in the browser's locale, the ISO string it came from in the title. */
export const Time = ({ iso, empty = "—" }: { readonly iso: string | null | undefined; readonly empty?: string }) =>
  iso === null || iso === undefined || iso === ""
    ? <span>{empty}</span>
    : <time dateTime={iso} title={iso}>{formatDateTime(iso)}</time>

/** "1,234 of 10,000 (12%)". */
export const progressText = (done: number, total: number): string => {
  const pct = total > 0 ? Math.floor((done / total) * 100) : 0
  return `${formatNumber(done)} of ${formatNumber(total)} (${pct}%)`
}

export const capitalise = (text: string): string => (text === "" ? text : text[0]!.toUpperCase() + text.slice(1).replace(/_/g, " "))
