// The console: who is signed in, and which page a path is.
import { useEffect, useMemo, useState } from "preact/hooks"
import { errorMessage, onUnauthorized, request, setCsrfToken } from "./api.ts"
import { useTitle } from "./hooks.ts"
import { Layout } from "./layout.tsx"
import { startLive, stopLive } from "./live.ts"
import { BroadcastPage, BroadcastsPage } from "./pages/broadcasts.tsx"
import { DeveloperPage } from "./pages/developer.tsx"
import { OpsPage } from "./pages/ops.tsx"
import { OverviewPage } from "./pages/overview.tsx"
import { TeamPage } from "./pages/team.tsx"
import { TemplatesPage } from "./pages/templates.tsx"
import { WebhooksPage } from "./pages/webhooks.tsx"
import { BASE, Link, matchRoute, navigate, type Route, safeNext, useLocation } from "./router.tsx"
import { readSession, SessionContext, type SessionContextValue, SignInPage } from "./session.tsx"
import type { Session } from "./types.ts"

type State =
  | { readonly kind: "loading" }
  | { readonly kind: "signed-out"; readonly notice: string | null }
  | { readonly kind: "signed-in"; readonly session: Session }
  | { readonly kind: "error"; readonly message: string }

/** The sign-in page, with the page to come back to (already on sign-in: as it is, keeping its ?next=). */
const signInPath = (): string => {
  const here = location.pathname + location.search
  const route = matchRoute(location.pathname.replace(/\/+$/, ""))
  if (route.page === "sign-in") return here
  return here === BASE || here === `${BASE}/` ? `${BASE}/sign-in` : `${BASE}/sign-in?next=${encodeURIComponent(here)}`
}

export const App = () => {
  const { path, search } = useLocation()
  const route = matchRoute(path)
  const [state, setState] = useState<State>({ kind: "loading" })

  const signedOut = (notice: string | null): void => {
    setCsrfToken(null)
    stopLive()
    setState({ kind: "signed-out", notice })
  }

  const refresh = async (): Promise<void> => {
    try {
      const answer = await readSession()
      if (answer.signed_in) {
        setCsrfToken(answer.csrf_token)
        setState({ kind: "signed-in", session: answer.session })
        startLive(() => {
          // The stream was closed: if the session is gone, back to sign-in.
          void readSession().then((again) => {
            if (!again.signed_in) {
              signedOut("Your session has ended. Sign in again.")
              navigate(signInPath(), { replace: true })
            }
          }, () => {})
        })
      } else {
        signedOut(null)
      }
    } catch (cause) {
      setState({ kind: "error", message: errorMessage(cause) })
    }
  }

  useEffect(() => {
    onUnauthorized(() => {
      signedOut("Your session has ended. Sign in again.")
      navigate(signInPath(), { replace: true })
    })
    void refresh()
  }, [])

  // Signed out on a page: sign-in first, then back to that page. Signed in on the sign-in page: on.
  useEffect(() => {
    if (route.page === "ops") return
    if (state.kind === "signed-out" && route.page !== "sign-in") navigate(signInPath(), { replace: true })
    if (state.kind === "signed-in" && route.page === "sign-in") navigate(safeNext(search.get("next")), { replace: true })
  }, [state.kind, route.page])

  const context = useMemo<SessionContextValue | null>(
    () =>
      state.kind !== "signed-in" ? null : {
        session: state.session,
        signOut: async () => {
          try {
            await request("DELETE", "/console/api/session", { signOutOn401: false })
          } catch {
            // Signed out anyway: the cookie is the server's to drop, and it ends within its hours.
          }
          signedOut("You are signed out.")
          navigate(`${BASE}/sign-in`)
        }
      },
    [state]
  )

  // The operator view has its own token, and needs no account.
  if (route.page === "ops") return <OpsPage />

  switch (state.kind) {
    case "loading":
      return (
        <main id="main" class="splash">
          <p role="status">Loading the console…</p>
        </main>
      )
    case "error":
      return (
        <main id="main" class="splash">
          <h1>The console could not start</h1>
          <p class="notice notice-bad" role="alert">{state.message}</p>
          <button type="button" class="button" onClick={() => void refresh()}>
            Try again
          </button>
        </main>
      )
    case "signed-out":
      return <SignInPage notice={state.notice} onSignedIn={refresh} />
    case "signed-in":
      return (
        <SessionContext.Provider value={context}>
          <Layout>
            <Page route={route} />
          </Layout>
        </SessionContext.Provider>
      )
  }
}

const Page = ({ route }: { readonly route: Route }) => {
  switch (route.page) {
    case "overview":
      return <OverviewPage />
    case "broadcasts":
      return <BroadcastsPage />
    case "broadcast":
      return <BroadcastPage key={route.id} id={route.id} />
    case "webhooks":
      return <WebhooksPage />
    case "templates":
      return <TemplatesPage />
    case "team":
      return <TeamPage />
    case "developer":
      return <DeveloperPage />
    case "sign-in":
    case "ops":
      return null
    case "not-found":
      return <NotFound />
  }
}

const NotFound = () => {
  useTitle("Not found")
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is no such page in the console. <Link href={BASE}>Go to the overview</Link>.
      </p>
    </>
  )
}
