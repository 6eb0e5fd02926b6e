// The frame of every signed-in page: a skip link, the header (account, person, role, sign-out),
// the navigation (behind a "Menu" button at phone width) and the one main landmark.
import type { ComponentChildren } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { type LiveState, useLive } from "./live.ts"
import { BASE, Link, useLocation } from "./router.tsx"
import { roleLabel, useSession } from "./session.tsx"

const NAV: ReadonlyArray<{ readonly href: string; readonly label: string }> = [
  { href: BASE, label: "Overview" },
  { href: `${BASE}/broadcasts`, label: "Broadcasts" },
  { href: `${BASE}/webhooks`, label: "Webhooks" },
  { href: `${BASE}/templates`, label: "Templates" },
  { href: `${BASE}/team`, label: "Team and API keys" },
  { href: `${BASE}/settings/developer`, label: "Developer settings" }
]

const LIVE_TEXT: Readonly<Record<LiveState, string>> = {
  connecting: "Live updates: connecting…",
  open: "Live updates: on",
  reconnecting: "Live updates: reconnecting…",
  off: "Live updates: off"
}

const LiveIndicator = () => {
  const { state } = useLive()
  return (
    <p class={`live-indicator live-${state}`} role="status">
      <span class="live-dot" aria-hidden="true" />
      {LIVE_TEXT[state]}
    </p>
  )
}

export const Layout = ({ children }: { readonly children: ComponentChildren }) => {
  const { session, signOut } = useSession()
  const { path } = useLocation()
  const [menuOpen, setMenuOpen] = useState(false)
  const [signingOut, setSigningOut] = useState(false)
  const mainRef = useRef<HTMLElement>(null)
  const firstPath = useRef(path)

  // A new page: close the menu and take the focus to its heading, as a page load would put it at the top.
  useEffect(() => {
    setMenuOpen(false)
    if (path === firstPath.current) return
    firstPath.current = path
    const heading = mainRef.current?.querySelector("h1")
    if (heading instanceof HTMLElement) {
      heading.tabIndex = -1
      heading.focus()
    } else {
      mainRef.current?.focus()
    }
  }, [path])

  // Escape closes the open menu and gives the focus back to its button.
  const menuButtonRef = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (!menuOpen) return
    const onKey = (event: KeyboardEvent): void => {
      if (event.key !== "Escape") return
      setMenuOpen(false)
      menuButtonRef.current?.focus()
    }
    document.addEventListener("keydown", onKey)
    return () => document.removeEventListener("keydown", onKey)
  }, [menuOpen])

  const onSignOut = async (): Promise<void> => {
    setSigningOut(true)
    try {
      await signOut()
    } finally {
      setSigningOut(false)
    }
  }

  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to main content
      </a>
      <header class="top">
        <div class="top-bar">
          <div class="identity">
            <a class="brand" href={BASE}>
              Herald <span class="brand-sub">console</span>
            </a>
            <span class="account-label" title="Account">
              {session.account_label}
            </span>
          </div>
          <div class="person">
            <span class="person-email">{session.email}</span>
            <span class={`badge badge-role role-${session.role}`}>
              <span class="sr-only">Role: </span>
              {roleLabel(session.role)}
            </span>
            <button type="button" class="button button-small" onClick={() => void onSignOut()} disabled={signingOut}>
              Sign out
            </button>
          </div>
          <button
            type="button"
            class="button menu-button"
            ref={menuButtonRef}
            aria-expanded={menuOpen ? "true" : "false"}
            aria-controls="site-nav"
            onClick={() => setMenuOpen((open) => !open)}
          >
            <span class="menu-icon" aria-hidden="true" />
            Menu
          </button>
        </div>
        <nav id="site-nav" aria-label="Console" class={menuOpen ? "nav nav-open" : "nav"}>
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <Link href={item.href}>{item.label}</Link>
              </li>
            ))}
          </ul>
          <LiveIndicator />
        </nav>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        {children}
      </main>
    </div>
  )
}
