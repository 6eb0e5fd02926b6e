// Webhooks: the endpoints with their last hour (refreshed every 10 s), each endpoint's recent
// attempts, and the dead letters with a Replay button.
import { useEffect, useState } from "preact/hooks"
import { api, ApiError, errorMessage, query } from "../api.ts"
import { Badge, Loading, LoadError, type Result, ResultRegion, RoleNote, RowAction, TableWrap, type Tone } from "../components.tsx"
import { formatMs, formatNumber, formatRate, Time, UrlText } from "../format.tsx"
import { useInterval, useLoad, useTitle } from "../hooks.ts"
import { denyOperate, useSession } from "../session.tsx"
import type { Attempt, DeadLetter, Health, Webhook, WebhookStats } from "../types.ts"

type StatsAnswer = { readonly since: string; readonly endpoints: ReadonlyArray<WebhookStats> }

const STATS_EVERY_MS = 10_000

const HEALTH: Readonly<Record<Health, { readonly tone: Tone; readonly label: string }>> = {
  healthy: { tone: "good", label: "Healthy" },
  degraded: { tone: "warn", label: "Degraded" },
  failing: { tone: "bad", label: "Failing" },
  idle: { tone: "neutral", label: "Idle" }
}

const HealthBadge = ({ webhookId, health }: { readonly webhookId: string; readonly health: Health }) => (
  <Badge tone={HEALTH[health].tone} data-testid={`health-${webhookId}`} data-health={health}>
    {HEALTH[health].label}
  </Badge>
)

export const WebhooksPage = () => {
  useTitle("Webhooks")
  const { session } = useSession()
  const deny = denyOperate(session.role)
  const webhooks = useLoad((signal) => api.get<{ readonly webhooks: ReadonlyArray<Webhook> }>("/rcs/webhooks", signal), [])
  const stats = useLoad((signal) => api.get<StatsAnswer>("/rcs/webhooks/stats", signal), [])
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set())
  useInterval(stats.reload, STATS_EVERY_MS)

  const statsOf = new Map((stats.data?.endpoints ?? []).map((s) => [s.webhook_id, s]))
  const toggle = (id: string): void =>
    setOpen((current) => {
      const next = new Set(current)
      if (next.has(id)) next.delete(id)
      else next.add(id)
      return next
    })

  return (
    <>
      <h1>Webhooks</h1>
      <section aria-labelledby="endpoints-title">
        <div class="section-head">
          <h2 id="endpoints-title">Endpoints</h2>
          <p class="muted">
            {stats.data !== undefined && <>Last hour, since <Time iso={stats.data.since} />. Refreshed every 10 seconds.</>}
          </p>
        </div>
        <div aria-live="polite" class="result-region">
          {stats.error !== undefined && <p class="notice notice-bad">The statistics could not be read: {errorMessage(stats.error)}</p>}
        </div>
        {webhooks.data === undefined
          ? webhooks.error !== undefined ? <LoadError error={webhooks.error} retry={webhooks.reload} /> : <Loading what="webhook endpoints" />
          : webhooks.data.webhooks.length === 0
          ? <p class="empty">No webhook endpoints. Create one with POST /api/v1/rcs/webhooks.</p>
          : (
            <TableWrap label="Webhook endpoints">
              <table class="table">
                <thead>
                  <tr>
                    <th scope="col">URL</th>
                    <th scope="col">Health</th>
                    <th scope="col">Success rate</th>
                    <th scope="col">Latency p50 / p95</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Events</th>
                    <th scope="col">Active</th>
                    <th scope="col"><span class="sr-only">Recent attempts</span></th>
                  </tr>
                </thead>
                {webhooks.data.webhooks.map((w) => (
                  <EndpointRows key={w.webhook_id} webhook={w} stats={statsOf.get(w.webhook_id)} expanded={open.has(w.webhook_id)} onToggle={() => toggle(w.webhook_id)} />
                ))}
              </table>
            </TableWrap>
          )}
      </section>
      <DeadLetters deny={deny} />
    </>
  )
}

/** One endpoint: its row, and below it, when expanded, its recent attempts (a tbody per endpoint). */
const EndpointRows = ({ webhook, stats, expanded, onToggle }: {
  readonly webhook: Webhook
  readonly stats: WebhookStats | undefined
  readonly expanded: boolean
  readonly onToggle: () => void
}) => {
  const panelId = `attempts-${webhook.webhook_id}`
  return (
    <tbody>
      <tr data-testid={`webhook-${webhook.webhook_id}`}>
        <th scope="row" class="cell-url">
          <span class="url"><UrlText url={webhook.url} /></span>
          {webhook.channel === "whatsapp" && <span class="muted"> (developer webhook)</span>}
        </th>
        <td>{stats === undefined ? "—" : <HealthBadge webhookId={webhook.webhook_id} health={stats.health} />}</td>
        <td class="num">{stats === undefined ? "—" : formatRate(stats.success_rate)}</td>
        <td class="num nowrap">{stats === undefined ? "—" : `${formatMs(stats.latency_ms.p50)} / ${formatMs(stats.latency_ms.p95)}`}</td>
        <td class="num nowrap">
          {stats === undefined ? "—" : (
            <span title={`${formatNumber(stats.succeeded)} succeeded, ${formatNumber(stats.failed)} failed`}>
              {formatNumber(stats.attempts)}
              {stats.failed > 0 && <span class="muted"> ({formatNumber(stats.failed)} failed)</span>}
            </span>
          )}
        </td>
        <td class="cell-events">{webhook.events.join(", ")}</td>
        <td>{webhook.active ? "Yes" : "No"}</td>
        <td>
          <button type="button" class="button button-small nowrap" aria-expanded={expanded ? "true" : "false"} aria-controls={expanded ? panelId : undefined} onClick={onToggle}>
            {expanded ? "Hide attempts" : "Show attempts"}
            <span class="sr-only"> of {webhook.url}</span>
          </button>
        </td>
      </tr>
      {expanded && (
        <tr class="detail-row">
          <td colSpan={8} id={panelId}>
            <Attempts webhookId={webhook.webhook_id} />
          </td>
        </tr>
      )}
    </tbody>
  )
}

const Attempts = ({ webhookId }: { readonly webhookId: string }) => {
  const attempts = useLoad(
    (signal) => api.get<{ readonly deliveries: ReadonlyArray<Attempt> }>(`/rcs/webhooks/${encodeURIComponent(webhookId)}/deliveries${query({ limit: 20 })}`, signal),
    [webhookId]
  )
  if (attempts.data === undefined) {
    return attempts.error !== undefined ? <LoadError error={attempts.error} retry={attempts.reload} /> : <Loading what="attempts" />
  }
  if (attempts.data.deliveries.length === 0) return <p class="empty">No attempts yet.</p>
  return (
    <div class="attempts">
      <table class="table table-compact">
        <caption class="caption">The last {attempts.data.deliveries.length} attempts</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Attempt</th>
            <th scope="col">Status</th>
            <th scope="col">Took</th>
            <th scope="col">Answer</th>
          </tr>
        </thead>
        <tbody>
          {attempts.data.deliveries.map((a) => {
            const ok = a.status_code >= 200 && a.status_code <= 299
            return (
              <tr key={a.attempt_id}>
                <td class="nowrap"><Time iso={a.sent_at} /></td>
                <td>{a.event_type}</td>
                <td class="num">{a.attempt} of 4</td>
                <td>
                  <Badge tone={ok ? "good" : "bad"}>{a.status_code === 0 ? "No answer" : a.status_code}</Badge>
                </td>
                <td class="num nowrap">{formatMs(a.took_ms)}</td>
                <td><code class="snippet">{a.response_snippet === "" ? "—" : a.response_snippet}</code></td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

const DeadLetters = ({ deny }: { readonly deny: string | undefined }) => {
  const letters = useLoad((signal) => api.get<{ readonly items: ReadonlyArray<DeadLetter> }>("/rcs/webhooks/dead-letter", signal), [])
  const [items, setItems] = useState<ReadonlyArray<DeadLetter>>([])
  const [busy, setBusy] = useState<string | null>(null)
  const [result, setResult] = useState<Result | null>(null)

  useEffect(() => {
    if (letters.data !== undefined) setItems(letters.data.items)
  }, [letters.data])

  const replay = async (item: DeadLetter): Promise<void> => {
    setBusy(item.delivery_id)
    try {
      const answer = await api.post<{ readonly new_delivery_id: string }>(`/rcs/webhooks/dead-letter/${encodeURIComponent(item.delivery_id)}/replay`)
      setItems((current) => current.filter((i) => i.delivery_id !== item.delivery_id))
      setResult({ tone: "good", text: `Replayed as ${answer.new_delivery_id}` })
    } catch (cause) {
      if (cause instanceof ApiError && cause.status === 404) {
        setItems((current) => current.filter((i) => i.delivery_id !== item.delivery_id))
      }
      setResult({ tone: "bad", text: `${item.delivery_id}: ${errorMessage(cause)}` })
    } finally {
      setBusy(null)
    }
  }

  // Viewers may not list dead letters (403): the server says so, the page explains it.
  const forbidden = letters.error instanceof ApiError && letters.error.status === 403
  return (
    <section aria-labelledby="dead-title">
      <h2 id="dead-title">Dead letters</h2>
      <p class="muted">Deliveries given up after four failed attempts. A replay sends the same event again as a new delivery.</p>
      <RoleNote text={forbidden ? "Dead letters are shown to operators and the owner." : undefined} />
      <ResultRegion result={result} id="replay-result" />
      {forbidden
        ? null
        : letters.data === undefined
        ? letters.error !== undefined ? <LoadError error={letters.error} retry={letters.reload} /> : <Loading what="dead letters" />
        : items.length === 0
        ? <p class="empty">No dead letters.</p>
        : (
          <TableWrap label="Dead letters">
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">Delivery</th>
                  <th scope="col">Event</th>
                  <th scope="col">URL</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Failed for good</th>
                  <th scope="col"><span class="sr-only">Action</span></th>
                </tr>
              </thead>
              <tbody>
                {items.map((item) => (
                  <tr key={item.delivery_id} data-testid={`dead-letter-${item.delivery_id}`}>
                    <th scope="row"><code>{item.delivery_id}</code></th>
                    <td>{item.event_type}</td>
                    <td class="cell-url"><span class="url"><UrlText url={item.url} /></span></td>
                    <td>{item.reason}</td>
                    <td class="nowrap"><Time iso={item.permanent_failure_at} /></td>
                    <td>
                      <RowAction
                        label="Replay"
                        busyLabel="Replaying…"
                        subject={item.delivery_id}
                        deny={deny}
                        busy={busy === item.delivery_id}
                        onClick={() => void replay(item)}
                        testId={`replay-${item.delivery_id}`}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
    </section>
  )
}
