// Overview: the plan, the wallet, today's messages by status, and sends and failures per hour
// over the last 24 hours (GET /api/v1/rcs/overview).
import { api, query } from "../api.ts"
import { Loading, LoadError } from "../components.tsx"
import { capitalise, formatHour, formatMoney, formatNumber, formatShortHour, Time } from "../format.tsx"
import { useLoad, useTitle, useWidth } from "../hooks.ts"
import { type HourBucket, MESSAGE_STATUSES, type Overview } from "../types.ts"

const timeZone = (): string | undefined => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone
  } catch {
    return undefined
  }
}

export const OverviewPage = () => {
  useTitle("Overview")
  // "Today" starts at the browser's midnight.
  const overview = useLoad((signal) => api.get<Overview & { readonly success: true }>(`/rcs/overview${query({ tz: timeZone() })}`, signal), [])
  const data = overview.data
  return (
    <>
      <h1>Overview</h1>
      {data === undefined
        ? overview.error !== undefined ? <LoadError error={overview.error} retry={overview.reload} /> : <Loading what="the overview" />
        : (
          <>
            {overview.error !== undefined && <LoadError error={overview.error} retry={overview.reload} />}
            <div class="cards">
              <section class="card" aria-labelledby="plan-title">
                <h2 id="plan-title" class="card-title">Plan</h2>
                <p class="card-value" data-testid="plan">{capitalise(data.account.plan)}</p>
                <p class="muted">{data.account.label}</p>
              </section>
              <section class="card" aria-labelledby="wallet-title">
                <h2 id="wallet-title" class="card-title">Wallet balance</h2>
                {data.wallet === null
                  ? <p class="card-note" data-testid="wallet">Shown to the account's owner only.</p>
                  : (
                    <>
                      <p class="card-value" data-testid="wallet">{formatMoney(data.wallet.balance, data.wallet.currency)}</p>
                      <p class="muted">{data.wallet.currency}</p>
                    </>
                  )}
              </section>
              <section class="card" aria-labelledby="today-title">
                <h2 id="today-title" class="card-title">Messages today</h2>
                <p class="card-value" data-testid="messages-today">{formatNumber(data.messages_today.total)}</p>
                <p class="muted">
                  since {data.messages_today.since !== undefined ? <Time iso={data.messages_today.since} /> : "midnight"}
                </p>
              </section>
            </div>
            <section aria-labelledby="by-status-title">
              <h2 id="by-status-title">Today's messages by status</h2>
              <dl class="status-grid">
                {MESSAGE_STATUSES.map((status) => (
                  <div key={status} class={`status-cell status-${status}`}>
                    <dt>{capitalise(status)}</dt>
                    <dd data-testid={`today-${status}`}>{formatNumber(data.messages_today.by_status[status] ?? 0)}</dd>
                  </div>
                ))}
              </dl>
            </section>
            <section aria-labelledby="chart-title">
              <h2 id="chart-title">Sends and failures, last 24 hours</h2>
              <HourChart buckets={data.last_24_hours} />
            </section>
          </>
        )}
    </>
  )
}

/** The axis's maximum: four steps of 1, 2 or 5 times a power of ten, at least the largest value. */
const niceMax = (max: number): number => {
  const raw = Math.max(1, max / 4)
  const power = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power
  return step * 4
}

const HEIGHT = 260
const MARGIN = { top: 12, right: 12, bottom: 48, left: 56 }
/** Hours between two labels of the hour axis, the fewest that leave room for the labels. */
const LABEL_STEPS = [3, 4, 6, 8, 12] as const
/** An axis label's width, estimated from its length (12px text; wide enough for "M" and "P"), and the room kept between two. */
const labelWidth = (label: string): number => label.length * 7.5
const LABEL_GAP = 10

/**
 * The hour axis's labels and every how many hours one is drawn: the hour and minutes ("10:00 PM")
 * while every sixth hour leaves room for them, else the hour alone ("10 PM"), spaced so that no
 * two labels meet (a 360 px phone drew "10:00 PM04:00 AM…" as one run).
 */
const hourLabels = (buckets: ReadonlyArray<HourBucket>, slot: number) => {
  const spacing = (labels: ReadonlyArray<string>) => {
    const widest = Math.max(0, ...labels.map(labelWidth)) + LABEL_GAP
    return LABEL_STEPS.find((step) => step * slot >= widest) ?? 24
  }
  const long = buckets.map((b) => formatHour(b.hour))
  const every = spacing(long)
  if (every <= 6) return { labels: long, every }
  const short = buckets.map((b) => formatShortHour(b.hour))
  return { labels: short, every: spacing(short) }
}

/** Two series (sent, failed) per hour as grouped bars, with a legend and a table of the same numbers for screen readers. */
const HourChart = ({ buckets }: { readonly buckets: ReadonlyArray<HourBucket> }) => {
  const [boxRef, measured] = useWidth<HTMLDivElement>()
  // Before the box is measured, a guess; then its width, down to what a 320 px phone leaves.
  const width = measured > 0 ? Math.max(measured, 240) : 300
  const totalSent = buckets.reduce((sum, b) => sum + b.sent, 0)
  const totalFailed = buckets.reduce((sum, b) => sum + b.failed, 0)
  const max = niceMax(Math.max(0, ...buckets.map((b) => Math.max(b.sent, b.failed))))
  const plotW = width - MARGIN.left - MARGIN.right
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom
  const slot = buckets.length > 0 ? plotW / buckets.length : plotW
  const barW = Math.max(2, Math.min(16, (slot - 4) / 2))
  const y = (v: number): number => MARGIN.top + plotH - (v / max) * plotH
  const ticks = [0, max / 4, max / 2, (3 * max) / 4, max]
  const { labels, every } = hourLabels(buckets, slot)
  const summary = `Bar chart of messages sent and failed per hour over the last 24 hours: ${formatNumber(totalSent)} sent and ` +
    `${formatNumber(totalFailed)} failed in all. The table after it gives each hour's numbers.`
  return (
    <figure class="chart">
      <ul class="legend" aria-label="Legend">
        <li>
          <svg width="16" height="16" aria-hidden="true" class="legend-swatch">
            <rect width="16" height="16" class="bar-sent" />
          </svg>
          Sent
        </li>
        <li>
          <svg width="16" height="16" aria-hidden="true" class="legend-swatch">
            <rect width="16" height="16" fill="url(#hatch-failed)" class="bar-failed" />
          </svg>
          Failed (hatched)
        </li>
      </ul>
      <div class="chart-box" ref={boxRef}>
        <svg width={width} height={HEIGHT} viewBox={`0 0 ${width} ${HEIGHT}`} role="img" aria-label={summary} data-testid="hour-chart">
          <defs>
            <pattern id="hatch-failed" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)">
              <rect width="6" height="6" class="hatch-bg" />
              <line x1="0" y1="0" x2="0" y2="6" class="hatch-line" stroke-width="3" />
            </pattern>
          </defs>
          {ticks.map((t) => (
            <g key={t}>
              <line x1={MARGIN.left} x2={width - MARGIN.right} y1={y(t)} y2={y(t)} class={t === 0 ? "axis-line" : "grid-line"} />
              <text x={MARGIN.left - 6} y={y(t)} class="axis-text" text-anchor="end" dominant-baseline="middle">
                {formatNumber(Math.round(t))}
              </text>
            </g>
          ))}
          {buckets.map((b, i) => {
            const x0 = MARGIN.left + i * slot + (slot - 2 * barW) / 2
            return (
              <g key={b.hour}>
                <rect x={x0} y={y(b.sent)} width={barW} height={Math.max(0, MARGIN.top + plotH - y(b.sent))} class="bar-sent">
                  <title>{`${formatHour(b.hour)}: ${formatNumber(b.sent)} sent`}</title>
                </rect>
                <rect
                  x={x0 + barW}
                  y={y(b.failed)}
                  width={barW}
                  height={Math.max(0, MARGIN.top + plotH - y(b.failed))}
                  fill="url(#hatch-failed)"
                  class="bar-failed"
                >
                  <title>{`${formatHour(b.hour)}: ${formatNumber(b.failed)} failed`}</title>
                </rect>
                {i % every === 0 && (
                  <text x={MARGIN.left + i * slot + slot / 2} y={MARGIN.top + plotH + 16} class="axis-text hour-label" text-anchor="middle">
                    {labels[i]}
                  </text>
                )}
              </g>
            )
          })}
          <text x={MARGIN.left + plotW / 2} y={HEIGHT - 6} class="axis-title" text-anchor="middle">
            Hour (local time)
          </text>
          <text x={14} y={MARGIN.top + plotH / 2} class="axis-title" text-anchor="middle" transform={`rotate(-90 14 ${MARGIN.top + plotH / 2})`}>
            Messages
          </text>
        </svg>
      </div>
      <figcaption class="muted">
        {formatNumber(totalSent)} sent and {formatNumber(totalFailed)} failed in the last 24 hours.
      </figcaption>
      <div class="sr-only">
        <table data-testid="hour-table">
          <caption>Messages sent and failed per hour, last 24 hours</caption>
          <thead>
            <tr>
              <th scope="col">Hour</th>
              <th scope="col">Sent</th>
              <th scope="col">Failed</th>
            </tr>
          </thead>
          <tbody>
            {buckets.map((b) => (
              <tr key={b.hour}>
                <th scope="row">
                  <time dateTime={b.hour}>{formatHour(b.hour)}</time>
                </th>
                <td>{formatNumber(b.sent)}</td>
                <td>{formatNumber(b.failed)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  )
}
