// Settings, Developer: the account's secret key (generated, shown once) and the developer webhook
// (its URL, and a new signing secret on demand). All the owner's.
import { useEffect, useState } from "preact/hooks"
import { api, ApiError, errorMessage, idempotencyKey } from "../api.ts"
import { ActionButton, Field, Loading, LoadError, type Result, ResultRegion, RoleNote, SecretPanel, useConfirm } from "../components.tsx"
import { formatDateTime, Time, UrlText } from "../format.tsx"
import { useLoad, useTitle } from "../hooks.ts"
import { denyOwner, useSession } from "../session.tsx"
import type { DeveloperWebhook, RotatedSecret } from "../types.ts"

export const DeveloperPage = () => {
  useTitle("Developer settings")
  const { session } = useSession()
  const deny = denyOwner(session.role)
  return (
    <>
      <h1>Developer settings</h1>
      <RoleNote text={deny === undefined ? undefined : "Only the account's owner can generate the secret key or change the developer webhook."} />
      <SecretKey deny={deny} />
      <DeveloperWebhookSection deny={deny} />
    </>
  )
}

const SecretKey = ({ deny }: { readonly deny: string | undefined }) => {
  const [confirmDialog, confirm] = useConfirm()
  const [shown, setShown] = useState<{ readonly key: string; readonly warning: string } | null>(null)
  const [busy, setBusy] = useState(false)
  const [result, setResult] = useState<Result | null>(null)

  const generate = async (): Promise<void> => {
    const ok = await confirm({
      title: "Generate a new secret key?",
      body: (
        <p>
          The current secret key <strong>stops working at once</strong>, on every node: programs that use it fail until they are given the
          new one. The new key is shown only once.
        </p>
      ),
      confirmLabel: "Generate a new key",
      danger: true
    })
    if (!ok) return
    setBusy(true)
    setResult(null)
    try {
      const answer = await api.post<{ readonly secret_key: string; readonly warning: string }>("/app/developer/secret-key", {}, {
        "idempotency-key": idempotencyKey()
      })
      setShown({ key: answer.secret_key, warning: answer.warning })
    } catch (cause) {
      setResult({ tone: "bad", text: errorMessage(cause) })
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="secret-key-title" class="panel">
      <h2 id="secret-key-title">Secret key</h2>
      <p>
        The secret key (<code>sk_live_…</code>) is the credential of the app API, the public API and GraphQL. Herald keeps only its hash, so
        it cannot be shown again: a new one replaces it.
      </p>
      {confirmDialog}
      <ActionButton class="button button-danger" deny={deny} busy={busy} onClick={() => void generate()} data-testid="generate-secret-key">
        {busy ? "Generating…" : "Generate a new secret key"}
      </ActionButton>
      <ResultRegion result={result} />
      {shown !== null && (
        <SecretPanel title="Your new secret key" value={shown.key} warning={shown.warning} testId="new-secret-key" onDismiss={() => setShown(null)} />
      )}
    </section>
  )
}

type WebhookAnswer = DeveloperWebhook & { readonly created?: boolean; readonly secret?: string }

const DeveloperWebhookSection = ({ deny }: { readonly deny: string | undefined }) => {
  const loaded = useLoad(async (signal) => {
    try {
      return await api.get<WebhookAnswer>("/app/developer/webhook", signal)
    } catch (cause) {
      // 404: none set yet.
      if (cause instanceof ApiError && cause.status === 404) return null
      throw cause
    }
  }, [])
  const [url, setUrl] = useState("")
  const [busy, setBusy] = useState<"save" | "rotate" | null>(null)
  const [result, setResult] = useState<Result | null>(null)
  const [secret, setSecret] = useState<{ readonly title: string; readonly value: string; readonly warning: string } | null>(null)
  const [confirmDialog, confirm] = useConfirm()
  const webhook = loaded.data ?? null
  const forbidden = loaded.error instanceof ApiError && loaded.error.status === 403

  useEffect(() => {
    if (loaded.data !== undefined && loaded.data !== null) setUrl(loaded.data.url)
  }, [loaded.data])

  const save = async (event: Event): Promise<void> => {
    event.preventDefault()
    if (busy !== null) return
    setBusy("save")
    setResult(null)
    try {
      const answer = await api.put<WebhookAnswer>("/app/developer/webhook", { url: url.trim() })
      loaded.setData(() => ({ webhook_id: answer.webhook_id, url: answer.url, events: answer.events, created_at: answer.created_at }))
      if (answer.secret !== undefined) {
        setSecret({
          title: "The developer webhook's signing secret",
          value: answer.secret,
          warning: "Store it now: it is shown only once. Verify each request's webhook-signature with it."
        })
      }
      setResult({ tone: "good", text: answer.created === true ? "The developer webhook is set." : "The developer webhook's URL is changed." })
    } catch (cause) {
      setResult({ tone: "bad", text: errorMessage(cause) })
    } finally {
      setBusy(null)
    }
  }

  const rotate = async (): Promise<void> => {
    const ok = await confirm({
      title: "Rotate the signing secret?",
      body: <p>A new secret signs every request from now on. For 24 hours the old one signs them too, so the receiver can move to the new one.</p>,
      confirmLabel: "Rotate the secret"
    })
    if (!ok) return
    setBusy("rotate")
    setResult(null)
    try {
      const answer = await api.post<RotatedSecret>("/app/developer/webhook/rotate-secret")
      setSecret({
        title: "The developer webhook's new signing secret",
        value: answer.secret,
        warning: `Store it now: it is shown only once. The previous secret keeps signing until ${formatDateTime(answer.previous_secret_expires_at)}.`
      })
    } catch (cause) {
      setResult({ tone: "bad", text: errorMessage(cause) })
    } finally {
      setBusy(null)
    }
  }

  return (
    <section aria-labelledby="dev-webhook-title" class="panel">
      <h2 id="dev-webhook-title">Developer webhook</h2>
      <p>Where the WhatsApp events (messages sent, delivered, read, failed and received, and hand-offs) are POSTed, signed.</p>
      {confirmDialog}
      {forbidden
        ? <p class="notice notice-info">The developer webhook is shown to the account's owner only.</p>
        : loaded.data === undefined
        ? loaded.error !== undefined ? <LoadError error={loaded.error} retry={loaded.reload} /> : <Loading what="the developer webhook" />
        : (
          <>
            {webhook === null
              ? <p data-testid="developer-webhook-none">No developer webhook is set.</p>
              : (
                <dl class="details">
                  <div>
                    <dt>URL</dt>
                    <dd class="url" data-testid="developer-webhook-url"><UrlText url={webhook.url} /></dd>
                  </div>
                  <div>
                    <dt>Events</dt>
                    <dd>{webhook.events.join(", ")}</dd>
                  </div>
                  <div>
                    <dt>Created</dt>
                    <dd><Time iso={webhook.created_at} /></dd>
                  </div>
                </dl>
              )}
            <form class="form" onSubmit={(e) => void save(e)}>
              <Field id="dw-url" label={webhook === null ? "Webhook URL" : "New URL"} hint="An absolute https URL (http is accepted too), at most 2,048 characters.">
                <input
                  id="dw-url"
                  type="url"
                  required
                  maxLength={2048}
                  placeholder="https://backend.example.com/herald"
                  value={url}
                  disabled={deny !== undefined}
                  aria-describedby="dw-url-hint"
                  onInput={(e) => setUrl(e.currentTarget.value)}
                />
              </Field>
              <div class="form-actions">
                <button type="submit" class="button button-primary" disabled={deny !== undefined || busy !== null} title={deny}>
                  {busy === "save" ? "Saving…" : webhook === null ? "Set the webhook" : "Change the URL"}
                </button>
                {webhook !== null && (
                  <ActionButton deny={deny} busy={busy === "rotate"} onClick={() => void rotate()} data-testid="rotate-developer-secret">
                    {busy === "rotate" ? "Rotating…" : "Rotate secret"}
                  </ActionButton>
                )}
              </div>
            </form>
          </>
        )}
      <ResultRegion result={result} />
      {secret !== null && (
        <SecretPanel title={secret.title} value={secret.value} warning={secret.warning} testId="new-webhook-secret" onDismiss={() => setSecret(null)} />
      )}
    </section>
  )
}
