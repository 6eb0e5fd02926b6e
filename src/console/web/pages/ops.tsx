// The operator view (/console/ops): the cluster's nodes, each kind's partitions and owners, the
// streams' backlog and the poison messages, refreshed every 5 s. Off (404) unless the node has
// HERALD_OPS_TOKEN; entered with that token, which gives its own session and CSRF token.
import { useEffect, useRef, useState } from "preact/hooks"
import { ApiError, errorMessage, request } from "../api.ts"
import { Loading, LoadError, type Result, ResultRegion, RowAction, TableWrap } from "../components.tsx"
import { formatNumber, Time } from "../format.tsx"
import { useInterval, useLoad, useTitle } from "../hooks.ts"
import { BASE } from "../router.tsx"
import type { OpsCluster, OpsSession, PoisonItem } from "../types.ts"

const REFRESH_MS = 5_000
const OPS = "/console/api/ops"

type Gate =
  | { readonly kind: "loading" }
  | { readonly kind: "off" }
  | { readonly kind: "error"; readonly error: unknown }
  | { readonly kind: "token" }
  | { readonly kind: "in"; readonly csrf: string | null }

const readGate = async (): Promise<Gate> => {
  try {
    const answer = await request<OpsSession>("GET", `${OPS}/session`, { signOutOn401: false })
    if (answer.enabled === false) return { kind: "off" }
    return answer.signed_in ? { kind: "in", csrf: answer.csrf_token ?? null } : { kind: "token" }
  } catch (cause) {
    if (cause instanceof ApiError && cause.status === 404) return { kind: "off" }
    return { kind: "error", error: cause }
  }
}

export const OpsPage = () => {
  useTitle("Operator view")
  const [gate, setGate] = useState<Gate>({ kind: "loading" })
  const check = (): void => {
    void readGate().then(setGate)
  }
  useEffect(check, [])
  const signOut = async (csrf: string | null): Promise<void> => {
    try {
      await request("DELETE", `${OPS}/session`, { csrf, signOutOn401: false })
    } catch {
      // The node did not answer: the page forgets the session all the same (the server's session
      // ends at its hours, or at a sign-out that reaches a node).
    }
    setGate({ kind: "token" })
  }

  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to main content
      </a>
      <header class="top">
        <div class="top-bar">
          <div class="identity">
            <a class="brand" href={`${BASE}/ops`}>
              Herald <span class="brand-sub">operator view</span>
            </a>
          </div>
          <a class="top-link" href={BASE}>
            Account console
          </a>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <h1>Cluster</h1>
        {gate.kind === "loading" && <Loading what="the operator view" />}
        {gate.kind === "off" && (
          <p class="notice notice-info" data-testid="ops-off">
            The operator view is off on this node (HERALD_OPS_TOKEN is not set).
          </p>
        )}
        {gate.kind === "error" && <LoadError error={gate.error} retry={check} />}
        {gate.kind === "token" && <TokenForm onSignedIn={check} />}
        {gate.kind === "in" && (
          <>
            <Cluster csrf={gate.csrf} onLost={() => setGate({ kind: "token" })} />
            <button type="button" class="button" onClick={() => void signOut(gate.csrf)}>
              Leave the operator view
            </button>
          </>
        )}
      </main>
    </div>
  )
}

const TokenForm = ({ onSignedIn }: { readonly onSignedIn: () => void }) => {
  const [token, setToken] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const inputRef = useRef<HTMLInputElement>(null)
  useEffect(() => inputRef.current?.focus(), [])

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    if (busy) return
    setBusy(true)
    setError(null)
    try {
      await request("POST", `${OPS}/session`, { body: { token }, signOutOn401: false })
      setToken("")
      onSignedIn()
    } catch (cause) {
      setError(errorMessage(cause))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="form panel narrow" onSubmit={(e) => void submit(e)} aria-labelledby="ops-token-title">
      <h2 id="ops-token-title">Enter the operator token</h2>
      <p class="muted">The node's HERALD_OPS_TOKEN. It opens a 12-hour operator session in this browser.</p>
      <div class="field">
        <label for="ops-token">Operator token</label>
        <input id="ops-token" ref={inputRef} type="password" autoComplete="off" required value={token} onInput={(e) => setToken(e.currentTarget.value)} />
      </div>
      <div aria-live="assertive" aria-atomic="true" class="result-region">
        {error !== null && <p class="notice notice-bad">{error}</p>}
      </div>
      <div class="form-actions">
        <button type="submit" class="button button-primary" disabled={busy}>
          {busy ? "Checking…" : "Open the operator view"}
        </button>
      </div>
    </form>
  )
}

type ClusterAnswer = OpsCluster & { readonly success: true }
type PoisonAnswer = { readonly items: ReadonlyArray<PoisonItem> }

/** Light backgrounds that keep dark text at AA contrast; an owner keeps its colour by its place among the nodes. */
const OWNER_COLOURS = 8

const shortId = (id: string): string => (id.length > 14 ? `${id.slice(0, 12)}…` : id)

const Cluster = ({ csrf, onLost }: { readonly csrf: string | null; readonly onLost: () => void }) => {
  const read = async <T,>(path: string, signal: AbortSignal): Promise<T> => {
    try {
      return await request<T>("GET", `${OPS}${path}`, { signal, signOutOn401: false })
    } catch (cause) {
      if (cause instanceof ApiError && cause.status === 401) onLost()
      throw cause
    }
  }
  const cluster = useLoad((signal) => read<ClusterAnswer>("/cluster", signal), [])
  const poison = useLoad((signal) => read<PoisonAnswer>("/poison", signal), [])
  const [result, setResult] = useState<Result | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [hidden, setHidden] = useState<ReadonlySet<string>>(new Set())
  useInterval(() => {
    cluster.reload()
    poison.reload()
  }, REFRESH_MS)

  const redrive = async (item: PoisonItem): Promise<void> => {
    setBusy(item.poison_id)
    try {
      await request("POST", `${OPS}/poison/${encodeURIComponent(item.poison_id)}/redrive`, { body: {}, csrf, signOutOn401: false })
      setHidden((current) => new Set(current).add(item.poison_id))
      setResult({ tone: "good", text: `Redriven: ${item.kind} ${item.actor_key} (${item.poison_id}).` })
      poison.reload()
    } catch (cause) {
      if (cause instanceof ApiError && cause.status === 401) onLost()
      setResult({ tone: "bad", text: `${item.poison_id}: ${errorMessage(cause)}` })
    } finally {
      setBusy(null)
    }
  }

  const data = cluster.data
  if (data === undefined) {
    return cluster.error !== undefined ? <LoadError error={cluster.error} retry={cluster.reload} /> : <Loading what="the cluster" />
  }
  const colour = new Map<string, number>()
  data.nodes.forEach((n, i) => colour.set(n.node_id, i % OWNER_COLOURS))
  const colourOf = (owner: string | null): string => {
    if (owner === null) return "owner-none"
    if (!colour.has(owner)) colour.set(owner, colour.size % OWNER_COLOURS)
    return `owner-${colour.get(owner)!}`
  }
  const items = (poison.data?.items ?? []).filter((i) => !hidden.has(i.poison_id))

  return (
    <div data-testid="ops-cluster">
      <p class="muted" aria-live="polite">
        {cluster.error !== undefined ? `Could not refresh: ${errorMessage(cluster.error)}` : "Refreshed every 5 seconds."}
      </p>
      <section aria-labelledby="nodes-title">
        <h2 id="nodes-title">Nodes</h2>
        <TableWrap label="Nodes">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Node</th>
                <th scope="col">Role</th>
                <th scope="col">Host</th>
                <th scope="col">Started</th>
              </tr>
            </thead>
            <tbody>
              {data.nodes.map((n) => (
                <tr key={n.node_id}>
                  <th scope="row">
                    <span class={`owner-chip ${colourOf(n.node_id)}`}>{n.node_id}</span>
                  </th>
                  <td>{n.role}</td>
                  <td>
                    {n.host ?? "—"}
                    {n.pid !== undefined && <span class="muted"> (pid {n.pid})</span>}
                    {n.version !== undefined && <span class="muted"> v{n.version}</span>}
                  </td>
                  <td class="nowrap"><Time iso={n.started_at} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      </section>
      <section aria-labelledby="kinds-title">
        <h2 id="kinds-title">Partitions and backlog</h2>
        <p class="muted">{formatNumber(data.partitions_per_kind)} partitions per kind. Each cell names the node that owns the partition.</p>
        {data.kinds.map((k) => (
          <section key={k.kind} class="kind" aria-labelledby={`kind-${k.kind}`}>
            <h3 id={`kind-${k.kind}`}>{k.kind}</h3>
            <dl class="backlog">
              <div>
                <dt>Pending</dt>
                <dd>{formatNumber(k.backlog.pending)}</dd>
              </div>
              <div>
                <dt>Ack pending</dt>
                <dd>{formatNumber(k.backlog.ack_pending)}</dd>
              </div>
              <div>
                <dt>Redelivered</dt>
                <dd>{formatNumber(k.backlog.redelivered)}</dd>
              </div>
            </dl>
            <ul class="partition-grid" aria-label={`Partitions of ${k.kind}`}>
              {k.partitions.map((p) => (
                <li
                  key={p.partition}
                  class={`partition ${colourOf(p.owner)}`}
                  title={`Partition ${p.partition}: ${p.owner ?? "no owner"}, epoch ${p.epoch}${p.since !== undefined && p.since !== null ? `, since ${p.since}` : ""}`}
                >
                  <span class="partition-no">{p.partition}</span>
                  <span class="partition-owner">{p.owner === null ? "none" : shortId(p.owner)}</span>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </section>
      <section aria-labelledby="poison-title">
        <h2 id="poison-title">Poison messages</h2>
        <ResultRegion result={result} />
        {poison.data === undefined
          ? poison.error !== undefined ? <LoadError error={poison.error} retry={poison.reload} /> : <Loading what="poison messages" />
          : items.length === 0
          ? <p class="empty">No poison messages.</p>
          : (
            <TableWrap label="Poison messages">
              <table class="table">
                <thead>
                  <tr>
                    <th scope="col">Kind</th>
                    <th scope="col">Partition</th>
                    <th scope="col">Actor</th>
                    <th scope="col">Error</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Parked</th>
                    <th scope="col"><span class="sr-only">Action</span></th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((item) => (
                    <tr key={item.poison_id} data-testid={`poison-${item.poison_id}`}>
                      <td>{item.kind}</td>
                      <td class="num">{item.partition}</td>
                      <th scope="row"><code>{item.actor_key}</code></th>
                      <td class="cell-error">{item.error}</td>
                      <td class="num">{item.attempts}</td>
                      <td class="nowrap"><Time iso={item.parked_at} /></td>
                      <td>
                        <RowAction
                          label="Redrive"
                          busyLabel="Redriving…"
                          subject={item.actor_key}
                          busy={busy === item.poison_id}
                          onClick={() => void redrive(item)}
                          testId={`redrive-${item.poison_id}`}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
      </section>
    </div>
  )
}
