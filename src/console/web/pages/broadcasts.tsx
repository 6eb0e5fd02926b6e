// Broadcasts: the list with live progress, the form to start one, and one broadcast's page with
// its counters, its targets and a Cancel button.
import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { api, ApiError, errorMessage, idempotencyKey, query } from "../api.ts"
import {
  ActionButton,
  Field,
  FormToggle,
  Loading,
  LoadError,
  ProgressBar,
  type Result,
  ResultRegion,
  RoleNote,
  StatusBadge,
  TableWrap,
  useConfirm
} from "../components.tsx"
import { capitalise, formatNumber, Time } from "../format.tsx"
import { useLoad, useTitle } from "../hooks.ts"
import { feedProgress, isTerminal, progressOf, useLive, useProgress } from "../live.ts"
import { BASE, Link } from "../router.tsx"
import { denyOperate, useSession } from "../session.tsx"
import {
  type Bot,
  type Broadcast,
  type BroadcastProgress,
  type ContactList,
  type Page,
  type Target,
  TARGET_STATUSES,
  type TargetStatus,
  type Template
} from "../types.ts"

type BroadcastsAnswer = Page & { readonly broadcasts: ReadonlyArray<Broadcast> }
type BroadcastAnswer = { readonly broadcast: Broadcast }
type TargetsAnswer = Page & { readonly targets: ReadonlyArray<Target> }

const PAGE = 50

/** Targets that have their outcome: the invariant sent + failed + cancelled = total once finished. */
const doneOf = (p: BroadcastProgress): number => Math.min(p.total_count, p.sent_count + p.failed_count + p.cancelled_count)

const COUNTERS: ReadonlyArray<readonly [keyof BroadcastProgress, string]> = [
  ["sent_count", "Sent"],
  ["delivered_count", "Delivered"],
  ["read_count", "Read"],
  ["failed_count", "Failed"],
  ["cancelled_count", "Cancelled"]
]

/** The counters in words: "Sent 1,234 · Delivered … of 10,000", with each number in a data- attribute. */
const Counters = ({ progress }: { readonly progress: BroadcastProgress }) => (
  <div
    class="counters"
    data-testid={`counters-${progress.broadcast_id}`}
    data-status={progress.status}
    data-total={progress.total_count}
    data-sent={progress.sent_count}
    data-delivered={progress.delivered_count}
    data-read={progress.read_count}
    data-failed={progress.failed_count}
    data-cancelled={progress.cancelled_count}
  >
    <ul class="counter-list">
      {COUNTERS.map(([key, label]) => (
        <li key={key} class={`counter counter-${key}${(progress[key] as number) > 0 ? " counter-nonzero" : ""}`}>
          <span class="counter-label">{label}</span> <span class="counter-value">{formatNumber(progress[key] as number)}</span>{" "}
        </li>
      ))}
    </ul>
    <span class="counter-total">of {formatNumber(progress.total_count)}</span>
  </div>
)

const LiveProgress = ({ progress, name }: { readonly progress: BroadcastProgress; readonly name: string }) => (
  <ProgressBar
    done={doneOf(progress)}
    total={progress.total_count}
    label={`Progress of ${name}`}
    testId={`progress-${progress.broadcast_id}`}
    {...(progress.total_count === 0 && !isTerminal(progress.status) ? { idle: "Not started yet" } : {})}
  />
)

const BroadcastRow = ({ broadcast }: { readonly broadcast: Broadcast }) => {
  const initial = useMemo(() => progressOf(broadcast), [broadcast])
  const progress = useProgress(initial)
  return (
    <tr data-testid={`broadcast-${broadcast.id}`}>
      <th scope="row" class="cell-name">
        <Link href={`${BASE}/broadcasts/${encodeURIComponent(broadcast.id)}`}>{broadcast.name}</Link>
      </th>
      <td>
        <StatusBadge status={progress.status} />
      </td>
      <td class="cell-progress">
        <LiveProgress progress={progress} name={broadcast.name} />
      </td>
      <td>
        <Counters progress={progress} />
      </td>
      <td class="nowrap">
        <Time iso={broadcast.scheduled_at ?? broadcast.created_at} />
      </td>
    </tr>
  )
}

export const BroadcastsPage = () => {
  useTitle("Broadcasts")
  const { session } = useSession()
  const deny = denyOperate(session.role)
  const [formOpen, setFormOpen] = useState(false)
  const [result, setResult] = useState<Result | null>(null)
  const [more, setMore] = useState<{ readonly busy: boolean; readonly error: unknown }>({ busy: false, error: undefined })
  const list = useLoad((signal) => api.get<BroadcastsAnswer>(`/rcs/broadcasts${query({ limit: PAGE })}`, signal), [])
  const [rows, setRows] = useState<ReadonlyArray<Broadcast>>([])
  const [cursor, setCursor] = useState<string | undefined>(undefined)
  const { reopenings } = useLive()

  useEffect(() => {
    if (list.data === undefined) return
    setRows(list.data.broadcasts)
    setCursor(list.data.next_cursor)
  }, [list.data])

  // After the stream comes back, what it missed: the first page's counters go into the store.
  useEffect(() => {
    if (reopenings === 0) return
    const controller = new AbortController()
    api.get<BroadcastsAnswer>(`/rcs/broadcasts${query({ limit: PAGE })}`, controller.signal).then(
      (answer) => answer.broadcasts.forEach((b) => feedProgress(progressOf(b))),
      () => {}
    )
    return () => controller.abort()
  }, [reopenings])

  const loadMore = async (): Promise<void> => {
    if (cursor === undefined) return
    setMore({ busy: true, error: undefined })
    try {
      const answer = await api.get<BroadcastsAnswer>(`/rcs/broadcasts${query({ limit: PAGE, cursor })}`)
      setRows((existing) => [...existing, ...answer.broadcasts.filter((b) => !existing.some((e) => e.id === b.id))])
      setCursor(answer.next_cursor)
      setMore({ busy: false, error: undefined })
    } catch (cause) {
      setMore({ busy: false, error: cause })
    }
  }

  const created = (broadcast: Broadcast): void => {
    setRows((existing) => [broadcast, ...existing.filter((b) => b.id !== broadcast.id)])
    setFormOpen(false)
    setResult({ tone: "good", text: `Broadcast “${broadcast.name}” created: ${broadcast.status}.` })
  }

  return (
    <>
      <div class="page-head">
        <h1>Broadcasts</h1>
        <FormToggle open={formOpen} onToggle={() => setFormOpen((open) => !open)} controls="new-broadcast" label="New broadcast" deny={deny} />
      </div>
      <RoleNote text={deny === undefined ? undefined : "You are a viewer: you can follow broadcasts but not start or cancel them."} />
      <ResultRegion result={result} />
      <div id="new-broadcast">{formOpen && deny === undefined && <NewBroadcastForm onCreated={created} onCancel={() => setFormOpen(false)} />}</div>
      <section aria-labelledby="broadcast-list-title">
        <h2 id="broadcast-list-title" class="sr-only">All broadcasts</h2>
        {list.data === undefined
          ? list.error !== undefined ? <LoadError error={list.error} retry={list.reload} /> : <Loading what="broadcasts" />
          : rows.length === 0
          ? <p class="empty">No broadcasts yet.</p>
          : (
            <>
              <TableWrap label="Broadcasts">
                <table class="table">
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Status</th>
                      <th scope="col">Progress</th>
                      <th scope="col">Counters</th>
                      <th scope="col">Scheduled or created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((b) => <BroadcastRow key={b.id} broadcast={b} />)}
                  </tbody>
                </table>
              </TableWrap>
              {more.error !== undefined && <LoadError error={more.error} />}
              {cursor !== undefined && (
                <button type="button" class="button load-more" onClick={() => void loadMore()} disabled={more.busy}>
                  {more.busy ? "Loading…" : "Load more"}
                </button>
              )}
            </>
          )}
      </section>
    </>
  )
}

// The form.

/** The distinct {{placeholders}} of a template's filled parts (src/templates/placeholders.ts), in order. */
const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g
export const placeholdersOf = (template: Template): ReadonlyArray<string> => {
  const texts: Array<string | undefined> = [template.text]
  const cards = [...(template.rich_card !== undefined ? [template.rich_card] : []), ...(template.carousel?.cards ?? [])]
  for (const card of cards) {
    texts.push(card.title, card.description)
    for (const s of card.suggestions ?? []) texts.push(s.text, s.postback_data)
  }
  for (const s of template.suggestions) texts.push(s.text, s.postback_data)
  const found = new Set<string>()
  for (const text of texts) {
    if (text === undefined) continue
    for (const match of text.matchAll(PLACEHOLDER)) found.add(match[1]!)
  }
  return [...found]
}

const NewBroadcastForm = ({ onCreated, onCancel }: { readonly onCreated: (b: Broadcast) => void; readonly onCancel: () => void }) => {
  const [name, setName] = useState("")
  const [botId, setBotId] = useState("")
  const [templateId, setTemplateId] = useState("")
  const [listId, setListId] = useState("")
  const [when, setWhen] = useState<"now" | "later">("now")
  const [scheduledAt, setScheduledAt] = useState("")
  const [variables, setVariables] = useState<Readonly<Record<string, string>>>({})
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const nameRef = useRef<HTMLInputElement>(null)
  const bots = useLoad((signal) => api.get<{ readonly bots: ReadonlyArray<Bot> }>("/rcs/bots?can_broadcast=true", signal), [])
  const lists = useLoad((signal) => api.get<Page & { readonly lists: ReadonlyArray<ContactList> }>(`/rcs/contact-lists${query({ limit: 1000 })}`, signal), [])
  const templates = useLoad(
    (signal) =>
      botId === ""
        ? Promise.resolve({ templates: [] as ReadonlyArray<Template> })
        : api.get<{ readonly templates: ReadonlyArray<Template> }>(`/rcs/templates${query({ bot_id: botId, status: "approved", limit: 1000 })}`, signal),
    [botId]
  )

  useEffect(() => nameRef.current?.focus(), [])
  useEffect(() => setTemplateId(""), [botId])

  const template = templates.data?.templates.find((t) => t.template_id === templateId)
  const placeholders = useMemo(() => (template === undefined ? [] : placeholdersOf(template)), [template])
  const activeBots = (bots.data?.bots ?? []).filter((b) => b.can_broadcast)

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    if (busy) return
    setError(null)
    let scheduled: string | undefined
    if (when === "later") {
      const date = new Date(scheduledAt)
      if (scheduledAt === "" || Number.isNaN(date.getTime())) {
        setError("Choose the date and time to start, or choose to start now.")
        return
      }
      scheduled = date.toISOString()
    }
    setBusy(true)
    try {
      const body = {
        name: name.trim(),
        bot_id: botId,
        template_id: templateId,
        contact_list_id: listId,
        ...(scheduled !== undefined ? { scheduled_at: scheduled } : {}),
        ...(placeholders.length > 0 ? { variables: Object.fromEntries(placeholders.map((p) => [p, variables[p] ?? ""])) } : {})
      }
      const answer = await api.post<BroadcastAnswer>("/rcs/broadcasts", body, { "idempotency-key": idempotencyKey() })
      feedProgress(progressOf(answer.broadcast))
      onCreated(answer.broadcast)
    } catch (cause) {
      setError(errorMessage(cause))
    } finally {
      setBusy(false)
    }
  }

  const loadProblem = bots.error ?? lists.error ?? templates.error
  return (
    <form class="form panel" onSubmit={(e) => void submit(e)} aria-labelledby="new-broadcast-title">
      <h2 id="new-broadcast-title">New broadcast</h2>
      {loadProblem !== undefined && <LoadError error={loadProblem} />}
      <div class="form-grid">
        <Field id="nb-name" label="Name">
          <input id="nb-name" ref={nameRef} type="text" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="nb-bot" label="Bot" hint={bots.loading ? "Loading bots…" : activeBots.length === 0 ? "No bot of yours may broadcast." : undefined}>
          <select id="nb-bot" required value={botId} onChange={(e) => setBotId(e.currentTarget.value)}
            aria-describedby={bots.loading || activeBots.length === 0 ? "nb-bot-hint" : undefined}>
            <option value="">Choose a bot</option>
            {activeBots.map((b) => (
              <option key={b.bot_id} value={b.bot_id} disabled={b.status !== "active"}>
                {b.status === "active" ? b.name : `${b.name} (${b.status})`}
              </option>
            ))}
          </select>
        </Field>
        <Field
          id="nb-template"
          label="Template"
          hint={botId === "" ? "Choose a bot first: its approved templates are listed." : templates.loading ? "Loading templates…" : (templates.data?.templates.length ?? 0) === 0 ? "This bot has no approved template." : undefined}
        >
          <select id="nb-template" required value={templateId} disabled={botId === ""} onChange={(e) => setTemplateId(e.currentTarget.value)} aria-describedby="nb-template-hint">
            <option value="">Choose a template</option>
            {(templates.data?.templates ?? []).map((t) => (
              <option key={t.template_id} value={t.template_id}>
                {t.name} ({t.type.replace("_", " ")})
              </option>
            ))}
          </select>
        </Field>
        <Field id="nb-list" label="Contact list">
          <select id="nb-list" required value={listId} onChange={(e) => setListId(e.currentTarget.value)}>
            <option value="">Choose a contact list</option>
            {(lists.data?.lists ?? []).map((l) => (
              <option key={l.list_id} value={l.list_id}>
                {l.name} ({formatNumber(l.contact_count)} contacts)
              </option>
            ))}
          </select>
        </Field>
      </div>
      <fieldset class="fieldset">
        <legend>When to start</legend>
        <div class="radio">
          <input type="radio" id="nb-now" name="nb-when" value="now" checked={when === "now"} onChange={() => setWhen("now")} />
          <label for="nb-now">Now</label>
        </div>
        <div class="radio">
          <input type="radio" id="nb-later" name="nb-when" value="later" checked={when === "later"} onChange={() => setWhen("later")} />
          <label for="nb-later">At a set time</label>
        </div>
        {when === "later" && (
          <Field id="nb-scheduled" label="Start at (your local time)">
            <input id="nb-scheduled" type="datetime-local" required value={scheduledAt} onInput={(e) => setScheduledAt(e.currentTarget.value)} />
          </Field>
        )}
      </fieldset>
      {placeholders.length > 0 && (
        <fieldset class="fieldset">
          <legend>Default values of the template's placeholders</legend>
          <p class="hint">Sent to contacts without a value of their own. Leave one empty to leave the placeholder out.</p>
          <div class="form-grid">
            {placeholders.map((p) => (
              <Field key={p} id={`nb-var-${p}`} label={`{{${p}}}`}>
                <input
                  id={`nb-var-${p}`}
                  type="text"
                  maxLength={1000}
                  value={variables[p] ?? ""}
                  onInput={(e) => {
                    const value = e.currentTarget.value
                    setVariables((v) => ({ ...v, [p]: value }))
                  }}
                />
              </Field>
            ))}
          </div>
        </fieldset>
      )}
      <div aria-live="assertive" aria-atomic="true" class="result-region">
        {error !== null && <p class="notice notice-bad">{error}</p>}
      </div>
      <div class="form-actions">
        <button type="submit" class="button button-primary" disabled={busy} aria-busy={busy ? "true" : undefined}>
          {busy ? "Creating…" : when === "now" ? "Start the broadcast" : "Schedule the broadcast"}
        </button>
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

// One broadcast.

const CANCELLABLE = new Set(["scheduled", "queued", "running"])

export const BroadcastPage = ({ id }: { readonly id: string }) => {
  const { session } = useSession()
  const deny = denyOperate(session.role)
  const loaded = useLoad((signal) => api.get<BroadcastAnswer>(`/rcs/broadcasts/${encodeURIComponent(id)}`, signal), [id])
  const { reopenings } = useLive()
  const broadcast = loaded.data?.broadcast
  useTitle(broadcast?.name ?? "Broadcast")

  useEffect(() => {
    if (reopenings > 0) loaded.reload()
  }, [reopenings])

  if (broadcast === undefined) {
    return (
      <>
        <p class="breadcrumb">
          <Link href={`${BASE}/broadcasts`}>← Broadcasts</Link>
        </p>
        <h1>Broadcast</h1>
        {loaded.error !== undefined
          ? loaded.error instanceof ApiError && loaded.error.status === 404
            ? <p class="notice notice-bad" role="alert">There is no such broadcast.</p>
            : <LoadError error={loaded.error} retry={loaded.reload} />
          : <Loading what="the broadcast" />}
      </>
    )
  }
  return <BroadcastDetail broadcast={broadcast} deny={deny} onChange={(b) => loaded.setData(() => ({ broadcast: b }))} />
}

const BroadcastDetail = ({ broadcast, deny, onChange }: {
  readonly broadcast: Broadcast
  readonly deny: string | undefined
  readonly onChange: (b: Broadcast) => void
}) => {
  const initial = useMemo(() => progressOf(broadcast), [broadcast])
  const progress = useProgress(initial)
  const [confirmDialog, confirm] = useConfirm()
  const [result, setResult] = useState<Result | null>(null)
  const [busy, setBusy] = useState(false)
  const names = useLoad(async (signal) => {
    const [bot, template, list] = await Promise.all([
      api.get<{ readonly bot: Bot }>(`/rcs/bots/${encodeURIComponent(broadcast.bot_id)}`, signal).then((a) => a.bot.name, () => null),
      api.get<{ readonly template: Template }>(`/rcs/templates/${encodeURIComponent(broadcast.template_id)}`, signal).then((a) => a.template.name, () => null),
      api.get<{ readonly list: ContactList }>(`/rcs/contact-lists/${encodeURIComponent(broadcast.contact_list_id)}`, signal).then((a) => a.list.name, () => null)
    ])
    return { bot, template, list }
  }, [broadcast.bot_id, broadcast.template_id, broadcast.contact_list_id])

  const cancellable = CANCELLABLE.has(progress.status) && !isTerminal(progress.status)
  const cancel = async (): Promise<void> => {
    const ok = await confirm({
      title: `Cancel “${broadcast.name}”?`,
      body: <p>No more messages of this broadcast will be sent. Messages already sent stay sent. This cannot be undone.</p>,
      confirmLabel: "Cancel the broadcast",
      danger: true
    })
    if (!ok) return
    setBusy(true)
    try {
      const answer = await api.post<BroadcastAnswer>(`/rcs/broadcasts/${encodeURIComponent(broadcast.id)}/cancel`)
      feedProgress(progressOf(answer.broadcast))
      onChange(answer.broadcast)
      setResult({ tone: "good", text: "The broadcast is cancelled. Targets not sent yet are being marked cancelled." })
    } catch (cause) {
      setResult({ tone: "bad", text: errorMessage(cause) })
    } finally {
      setBusy(false)
    }
  }

  const n = names.data
  return (
    <>
      <p class="breadcrumb">
        <Link href={`${BASE}/broadcasts`}>← Broadcasts</Link>
      </p>
      <div class="page-head">
        <h1>{broadcast.name}</h1>
        <StatusBadge status={progress.status} />
      </div>
      {confirmDialog}
      <section aria-labelledby="progress-title" class="panel">
        <h2 id="progress-title">Progress</h2>
        <LiveProgress progress={progress} name={broadcast.name} />
        <Counters progress={progress} />
        {cancellable && (
          <div class="form-actions">
            <ActionButton
              class="button button-danger"
              deny={deny}
              busy={busy}
              onClick={() => void cancel()}
              data-testid="cancel-broadcast"
            >
              Cancel the broadcast
            </ActionButton>
          </div>
        )}
        <ResultRegion result={result} />
      </section>
      <section aria-labelledby="details-title">
        <h2 id="details-title">Details</h2>
        <dl class="details">
          <div>
            <dt>Bot</dt>
            <dd>{n?.bot ?? <code>{broadcast.bot_id}</code>}</dd>
          </div>
          <div>
            <dt>Template</dt>
            <dd>{n?.template ?? <code>{broadcast.template_id}</code>}</dd>
          </div>
          <div>
            <dt>Contact list</dt>
            <dd>{n?.list ?? <code>{broadcast.contact_list_id}</code>}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd><Time iso={broadcast.created_at} /></dd>
          </div>
          <div>
            <dt>Scheduled for</dt>
            <dd><Time iso={broadcast.scheduled_at} empty="At once" /></dd>
          </div>
          <div>
            <dt>Started</dt>
            <dd><Time iso={broadcast.started_at} empty="Not yet" /></dd>
          </div>
          {broadcast.completed_at !== null && (
            <div>
              <dt>Completed</dt>
              <dd><Time iso={broadcast.completed_at} /></dd>
            </div>
          )}
          {broadcast.cancelled_at !== null && (
            <div>
              <dt>Cancelled</dt>
              <dd><Time iso={broadcast.cancelled_at} /></dd>
            </div>
          )}
          <div>
            <dt>Id</dt>
            <dd><code>{broadcast.id}</code></dd>
          </div>
        </dl>
      </section>
      <Targets broadcastId={broadcast.id} />
    </>
  )
}

const Targets = ({ broadcastId }: { readonly broadcastId: string }) => {
  const [status, setStatus] = useState<TargetStatus | "">("")
  const [rows, setRows] = useState<ReadonlyArray<Target>>([])
  const [cursor, setCursor] = useState<string | undefined>(undefined)
  const [more, setMore] = useState<{ readonly busy: boolean; readonly error: unknown }>({ busy: false, error: undefined })
  const path = (c?: string): string =>
    `/rcs/broadcasts/${encodeURIComponent(broadcastId)}/targets${query({ limit: PAGE, status: status === "" ? undefined : status, cursor: c })}`
  const first = useLoad((signal) => api.get<TargetsAnswer>(path(), signal), [broadcastId, status])

  useEffect(() => {
    if (first.data === undefined) return
    setRows(first.data.targets)
    setCursor(first.data.next_cursor)
  }, [first.data])

  const loadMore = async (): Promise<void> => {
    if (cursor === undefined) return
    setMore({ busy: true, error: undefined })
    try {
      const answer = await api.get<TargetsAnswer>(path(cursor))
      setRows((existing) => [...existing, ...answer.targets])
      setCursor(answer.next_cursor)
      setMore({ busy: false, error: undefined })
    } catch (cause) {
      setMore({ busy: false, error: cause })
    }
  }

  return (
    <section aria-labelledby="targets-title">
      <h2 id="targets-title">Targets</h2>
      <div class="toolbar">
        <div class="field field-inline">
          <label for="target-status">Status</label>
          <select id="target-status" value={status} onChange={(e) => setStatus(e.currentTarget.value as TargetStatus | "")}>
            <option value="">All</option>
            {TARGET_STATUSES.map((s) => <option key={s} value={s}>{capitalise(s)}</option>)}
          </select>
        </div>
        <button type="button" class="button button-small" onClick={first.reload} disabled={first.loading}>
          Refresh
        </button>
        <p class="muted" aria-live="polite">
          {first.loading ? "Loading targets…" : `${formatNumber(rows.length)} shown${cursor !== undefined ? ", more to load" : ""}.`}
        </p>
      </div>
      {first.error !== undefined
        ? <LoadError error={first.error} retry={first.reload} />
        : first.data !== undefined && rows.length === 0
        ? <p class="empty">{status === "" ? "No targets yet: they appear once the broadcast starts." : `No ${status} targets.`}</p>
        : rows.length > 0 && (
          <TableWrap label="Targets">
            <table class="table" data-testid="targets">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Phone</th>
                  <th scope="col">Status</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Delivered</th>
                  <th scope="col">Read</th>
                  <th scope="col">Failure</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((t) => (
                  <tr key={t.target_no}>
                    <td class="num">{t.target_no}</td>
                    <th scope="row" class="nowrap">{t.phone}</th>
                    <td><StatusBadge status={t.status} /></td>
                    <td class="nowrap"><Time iso={t.sent_at} /></td>
                    <td class="nowrap"><Time iso={t.delivered_at} /></td>
                    <td class="nowrap"><Time iso={t.read_at} /></td>
                    <td class="cell-failure">
                      {t.failure_reason ?? "—"}
                      {t.failed_at !== null && <span class="muted block"><Time iso={t.failed_at} /></span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      {more.error !== undefined && <LoadError error={more.error} />}
      {cursor !== undefined && first.data !== undefined && (
        <button type="button" class="button load-more" onClick={() => void loadMore()} disabled={more.busy}>
          {more.busy ? "Loading…" : "Load more"}
        </button>
      )}
    </section>
  )
}
