// Small pieces shared by the pages.
import type { ButtonHTMLAttributes, ComponentChildren, HTMLAttributes, JSX } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { errorMessage } from "./api.ts"
import { capitalise, progressText } from "./format.tsx"

/** A table's box: scrolls sideways on narrow screens, reachable with the keyboard to scroll it. */
export const TableWrap = ({ label, children }: { readonly label: string; readonly children: ComponentChildren }) => (
  <div class="table-wrap" role="region" aria-label={`${label} table`} tabIndex={0}>
    {children}
  </div>
)

export type Tone = "good" | "warn" | "bad" | "info" | "neutral"

/** A status told in words, coloured as well. */
export const Badge = ({ tone, children, ...rest }: { readonly tone: Tone; readonly children: ComponentChildren } & HTMLAttributes<HTMLSpanElement>) => (
  <span class={`badge badge-${tone}`} {...rest}>
    {children}
  </span>
)

const STATUS_TONES: Readonly<Record<string, Tone>> = {
  scheduled: "info",
  queued: "info",
  running: "warn",
  completed: "good",
  cancelled: "neutral",
  pending: "neutral",
  unconfirmed: "warn",
  sent: "info",
  delivered: "good",
  read: "good",
  failed: "bad",
  approved: "good",
  rejected: "bad",
  active: "good",
  suspended: "bad"
}

export const StatusBadge = ({ status }: { readonly status: string }) => <Badge tone={STATUS_TONES[status] ?? "neutral"}>{capitalise(status)}</Badge>

/** A progress bar (role progressbar) with its numbers as text, announced politely as they move. */
export const ProgressBar = ({ done, total, label, testId, idle }: {
  readonly done: number
  readonly total: number
  readonly label: string
  readonly testId?: string
  /** Said instead of the numbers while there is nothing to count yet. */
  readonly idle?: string
}) => {
  const pct = total > 0 ? Math.min(100, (done / total) * 100) : 0
  const text = idle ?? progressText(done, total)
  return (
    <div class="progress">
      <div
        class="progress-track"
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done}
        aria-valuetext={text}
        data-testid={testId}
      >
        <div class="progress-fill" style={{ width: `${pct}%` }} />
      </div>
      <span class="progress-text" aria-live="polite" aria-atomic="true">
        {text}
      </span>
    </div>
  )
}

export const Loading = ({ what }: { readonly what: string }) => (
  <p class="muted" role="status">
    Loading {what}…
  </p>
)

/** A read that failed: what went wrong, and a way to try again. */
export const LoadError = ({ error, retry }: { readonly error: unknown; readonly retry?: () => void }) => (
  <div class="notice notice-bad" role="alert">
    <p>{errorMessage(error)}</p>
    {retry !== undefined && (
      <button type="button" class="button" onClick={retry}>
        Try again
      </button>
    )}
  </div>
)

export interface Result {
  readonly tone: "good" | "bad"
  readonly text: string
}

/**
 * A table's row actions: one row busy at a time, and what came of the last action (the text the
 * action answers, or its error) for a ResultRegion.
 */
export const useRowActions = () => {
  const [result, setResult] = useState<Result | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const run = async (rowId: string, action: () => Promise<string>): Promise<void> => {
    setBusy(rowId)
    try {
      setResult({ tone: "good", text: await action() })
    } catch (cause) {
      setResult({ tone: "bad", text: errorMessage(cause) })
    } finally {
      setBusy(null)
    }
  }
  return { result, setResult, busy, run } as const
}

/** Where the answer of an action is told: always in the page, so screen readers hear it when it changes. */
export const ResultRegion = ({ result, id }: { readonly result: Result | null; readonly id?: string }) => (
  <div aria-live="polite" aria-atomic="true" class="result-region" id={id}>
    {result !== null && <p class={`notice notice-${result.tone}`}>{result.text}</p>}
  </div>
)

/** A button for a change the person may not be allowed to make: disabled with the reason in its title. */
export const ActionButton = ({ deny, busy = false, class: className = "button", children, ...rest }: {
  readonly deny?: string | undefined
  readonly busy?: boolean
  readonly children: ComponentChildren
} & Omit<ButtonHTMLAttributes<HTMLButtonElement>, "disabled">) => (
  <button
    type="button"
    class={String(className)}
    disabled={deny !== undefined || busy}
    title={deny}
    aria-busy={busy ? "true" : undefined}
    {...rest}
  >
    {children}
  </button>
)

/** The button that opens and closes a page's form (the element `controls`); a viewer's is disabled. */
export const FormToggle = ({ open, onToggle, controls, label, deny }: {
  readonly open: boolean
  readonly onToggle: () => void
  readonly controls: string
  readonly label: string
  readonly deny: string | undefined
}) => (
  <ActionButton class="button button-primary" deny={deny} aria-expanded={open ? "true" : "false"} aria-controls={controls} onClick={onToggle}>
    {open ? "Close the form" : label}
  </ActionButton>
)

/** A table row's action: it names its row to screen readers and says what it is doing while busy. */
export const RowAction = ({ label, busyLabel, subject, danger = false, deny, busy, onClick, testId }: {
  readonly label: string
  readonly busyLabel?: string
  readonly subject: string
  readonly danger?: boolean
  readonly deny?: string | undefined
  readonly busy: boolean
  readonly onClick: () => void
  readonly testId: string
}) => (
  <ActionButton class={danger ? "button button-small button-danger" : "button button-small"} deny={deny} busy={busy} onClick={onClick} data-testid={testId}>
    {busy && busyLabel !== undefined ? busyLabel : label}
    <span class="sr-only"> {subject}</span>
  </ActionButton>
)

export interface ConfirmRequest {
  readonly title: string
  readonly body: ComponentChildren
  readonly confirmLabel: string
  readonly danger?: boolean
}

/**
 * A modal question (the native <dialog>): Escape or "Keep" says no. The question's buttons carry
 * data-testid confirm-ok and confirm-cancel.
 */
const ConfirmDialog = ({ request, onClose }: { readonly request: ConfirmRequest; readonly onClose: (ok: boolean) => void }) => {
  const ref = useRef<HTMLDialogElement>(null)
  const answered = useRef(false)
  useEffect(() => {
    const dialog = ref.current
    if (dialog === null) return
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
    if (!dialog.open) dialog.showModal()
    return () => {
      if (dialog.open) dialog.close()
      if (opener !== null && opener.isConnected && !(opener as HTMLButtonElement).disabled) opener.focus()
    }
  }, [])
  const answer = (ok: boolean): void => {
    if (answered.current) return
    answered.current = true
    onClose(ok)
  }
  return (
    <dialog ref={ref} class="dialog" aria-labelledby="confirm-title" onClose={() => answer(false)} onCancel={() => answer(false)}>
      <h2 id="confirm-title">{request.title}</h2>
      <div class="dialog-body">{request.body}</div>
      <div class="dialog-actions">
        <button type="button" class="button" autoFocus onClick={() => answer(false)} data-testid="confirm-cancel">
          Keep
        </button>
        <button
          type="button"
          class={request.danger === true ? "button button-danger" : "button button-primary"}
          onClick={() => answer(true)}
          data-testid="confirm-ok"
        >
          {request.confirmLabel}
        </button>
      </div>
    </dialog>
  )
}

/** [the dialog to render, ask(question) → whether the person confirmed]. */
export const useConfirm = (): [JSX.Element | null, (request: ConfirmRequest) => Promise<boolean>] => {
  const [pending, setPending] = useState<{ readonly request: ConfirmRequest; readonly resolve: (ok: boolean) => void } | null>(null)
  const ask = (request: ConfirmRequest): Promise<boolean> =>
    new Promise<boolean>((resolve) => {
      setPending({ request, resolve })
    })
  const element = pending === null ? null : (
    <ConfirmDialog
      request={pending.request}
      onClose={(ok) => {
        pending.resolve(ok)
        setPending(null)
      }}
    />
  )
  return [element, ask]
}

/**
 * A secret shown once (an API key, the secret key, a signing secret): the value, a Copy button,
 * the warning, and a button to put it away, after which nothing holds it any more.
 */
export const SecretPanel = ({ title, value, warning, testId, onDismiss, children }: {
  readonly title: string
  readonly value: string
  readonly warning: string
  readonly testId: string
  readonly onDismiss: () => void
  readonly children?: ComponentChildren
}) => {
  const [copyState, setCopyState] = useState<string>("")
  const headingRef = useRef<HTMLHeadingElement>(null)
  const valueRef = useRef<HTMLElement>(null)
  useEffect(() => {
    headingRef.current?.focus()
  }, [])
  const selectValue = (): void => {
    const element = valueRef.current
    const selection = window.getSelection()
    if (element === null || selection === null) return
    const range = document.createRange()
    range.selectNodeContents(element)
    selection.removeAllRanges()
    selection.addRange(range)
  }
  const copy = async (): Promise<void> => {
    try {
      if (navigator.clipboard === undefined) throw new Error("no clipboard")
      await navigator.clipboard.writeText(value)
      setCopyState("Copied to the clipboard.")
    } catch {
      selectValue()
      setCopyState("The browser did not allow copying: the key is selected, copy it with Ctrl+C or ⌘C.")
    }
  }
  return (
    <section class="secret-panel" aria-labelledby={`${testId}-title`}>
      <h3 id={`${testId}-title`} tabIndex={-1} ref={headingRef}>
        {title}
      </h3>
      <p class="secret-warning">
        <strong>Warning:</strong> {warning}
      </p>
      <div class="secret-row">
        <code class="secret-value" data-testid={testId} ref={valueRef}>
          {value}
        </code>
        <button type="button" class="button button-primary" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      {children}
      <p aria-live="polite" class="muted">
        {copyState}
      </p>
      <button type="button" class="button" onClick={onDismiss}>
        I have stored it: hide it
      </button>
    </section>
  )
}

/** A form field: its label tied to the control, an optional hint tied by aria-describedby. */
export const Field = ({ id, label, hint, children }: {
  readonly id: string
  readonly label: string
  readonly hint?: string
  readonly children: ComponentChildren
}) => (
  <div class="field">
    <label for={id}>{label}</label>
    {children}
    {hint !== undefined && (
      <p class="hint" id={`${id}-hint`}>
        {hint}
      </p>
    )}
  </div>
)

/** The note at the top of a page for someone whose role cannot change what it shows. */
export const RoleNote = ({ text }: { readonly text: string | undefined }) =>
  text === undefined ? null : <p class="notice notice-info role-note">{text}</p>
