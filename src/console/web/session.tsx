// The signed-in person (GET /console/api/session), what their role lets them do, and the sign-in page.
import { createContext } from "preact"
import { useContext, useEffect, useRef, useState } from "preact/hooks"
import { ApiError, errorMessage, request } from "./api.ts"
import { useTitle } from "./hooks.ts"
import type { AccountChoice, Role, Session, SessionAnswer, SignInAnswer } from "./types.ts"

export interface SessionContextValue {
  readonly session: Session
  readonly signOut: () => Promise<void>
}

export const SessionContext = createContext<SessionContextValue | null>(null)

export const useSession = (): SessionContextValue => {
  const value = useContext(SessionContext)
  if (value === null) throw new Error("useSession outside a signed-in page")
  return value
}

export const readSession = (signal?: AbortSignal): Promise<SessionAnswer> =>
  request<SessionAnswer>("GET", "/console/api/session", { signOutOn401: false, ...(signal !== undefined ? { signal } : {}) })

// What a role may do (UX only: the server decides).

export const OPERATOR_ONLY = "Only an operator or the owner can do this; you are a viewer."
export const OWNER_ONLY = "Only the account's owner can do this."

/** Why this person may not start, cancel or replay things; undefined when they may. */
export const denyOperate = (role: Role): string | undefined => (role === "viewer" ? OPERATOR_ONLY : undefined)

/** Why this person may not manage the team, the keys or the secret key; undefined when they may. */
export const denyOwner = (role: Role): string | undefined => (role === "owner" ? undefined : OWNER_ONLY)

export const roleLabel = (role: Role): string => ({ owner: "Owner", operator: "Operator", viewer: "Viewer" })[role]

// The sign-in page.

type Step =
  | { readonly kind: "password" }
  | { readonly kind: "code"; readonly message: string }
  | { readonly kind: "pick"; readonly accounts: ReadonlyArray<AccountChoice> }

export const SignInPage = ({ onSignedIn, notice }: { readonly onSignedIn: () => Promise<void>; readonly notice: string | null }) => {
  useTitle("Sign in")
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [code, setCode] = useState("")
  const [step, setStep] = useState<Step>({ kind: "password" })
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const codeRef = useRef<HTMLInputElement>(null)
  const pickRef = useRef<HTMLHeadingElement>(null)
  const errorRef = useRef<HTMLDivElement>(null)

  useEffect(() => {
    if (step.kind === "code") codeRef.current?.focus()
    if (step.kind === "pick") pickRef.current?.focus()
  }, [step.kind])

  const fail = (cause: unknown): void => {
    setError(cause instanceof ApiError && cause.code === "too_many_attempts"
      ? `${errorMessage(cause)} Wait a while before trying again.`
      : errorMessage(cause))
    window.setTimeout(() => errorRef.current?.focus(), 0)
  }

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    if (busy) return
    setBusy(true)
    setError(null)
    try {
      const body = step.kind === "code" ? { email, password, totp_code: code.trim() } : { email, password }
      const answer = await request<SignInAnswer>("POST", "/console/api/session", { body, signOutOn401: false })
      if (answer.status === "signed_in") {
        setPassword("")
        await onSignedIn()
      } else if (answer.status === "requires_2fa") {
        setStep({ kind: "code", message: answer.message ?? "Enter the code from your authenticator app, or a recovery code." })
      } else {
        setPassword("")
        setStep({ kind: "pick", accounts: answer.accounts })
      }
    } catch (cause) {
      fail(cause)
    } finally {
      setBusy(false)
    }
  }

  const pick = async (accountId: string): Promise<void> => {
    if (busy) return
    setBusy(true)
    setError(null)
    try {
      await request<SignInAnswer>("POST", "/console/api/session/account", { body: { account_id: accountId }, signOutOn401: false })
      await onSignedIn()
    } catch (cause) {
      fail(cause)
    } finally {
      setBusy(false)
    }
  }

  const startOver = (): void => {
    setStep({ kind: "password" })
    setCode("")
    setPassword("")
    setError(null)
  }

  return (
    <div class="sign-in-page">
      <a class="skip-link" href="#main">
        Skip to main content
      </a>
      <main id="main" class="sign-in" tabIndex={-1}>
        <p class="brand brand-large" aria-hidden="true">
          Herald
        </p>
        <h1>Sign in to the Herald console</h1>
        {notice !== null && <p class="notice notice-info" role="status">{notice}</p>}
        <div ref={errorRef} tabIndex={-1} aria-live="assertive" aria-atomic="true" class="result-region">
          {error !== null && <p class="notice notice-bad" data-testid="sign-in-error">{error}</p>}
        </div>
        {step.kind === "pick"
          ? (
            <section aria-labelledby="pick-title">
              <h2 id="pick-title" tabIndex={-1} ref={pickRef}>
                Choose an account
              </h2>
              <p>You belong to several accounts. Which one do you want to open?</p>
              <ul class="account-list">
                {step.accounts.map((account) => (
                  <li key={account.account_id}>
                    <button type="button" class="button account-button" disabled={busy} onClick={() => void pick(account.account_id)}>
                      <span class="account-name">{account.label}</span>
                      <span class="muted"> as {roleLabel(account.role).toLowerCase()}</span>
                    </button>
                  </li>
                ))}
              </ul>
              <button type="button" class="button-link" onClick={startOver}>
                Sign in as someone else
              </button>
            </section>
          )
          : (
            <form onSubmit={(e) => void submit(e)} class="form sign-in-form">
              <div class="field">
                <label for="sign-in-email">E-mail</label>
                <input
                  id="sign-in-email"
                  type="email"
                  autoComplete="username"
                  required
                  value={email}
                  readOnly={step.kind === "code"}
                  onInput={(e) => setEmail(e.currentTarget.value)}
                />
              </div>
              <div class="field">
                <label for="sign-in-password">Password</label>
                <input
                  id="sign-in-password"
                  type="password"
                  autoComplete="current-password"
                  required
                  value={password}
                  readOnly={step.kind === "code"}
                  onInput={(e) => setPassword(e.currentTarget.value)}
                />
              </div>
              {step.kind === "code" && (
                <div class="field">
                  <label for="sign-in-code">Two-factor code</label>
                  <input
                    id="sign-in-code"
                    ref={codeRef}
                    type="text"
                    autoComplete="one-time-code"
                    autoCapitalize="off"
                    spellcheck={false}
                    required
                    value={code}
                    aria-describedby="sign-in-code-hint"
                    onInput={(e) => setCode(e.currentTarget.value)}
                  />
                  <p class="hint" id="sign-in-code-hint">
                    {step.message}
                  </p>
                </div>
              )}
              <div class="form-actions">
                <button type="submit" class="button button-primary" disabled={busy} aria-busy={busy ? "true" : undefined}>
                  {busy ? "Signing in…" : "Sign in"}
                </button>
                {step.kind === "code" && (
                  <button type="button" class="button-link" onClick={startOver}>
                    Start again
                  </button>
                )}
              </div>
            </form>
          )}
      </main>
    </div>
  )
}
