// Routing by path under /console with the History API. Links are real <a href>s: a click on one
// that stays in the console (no modifier key, no target) is turned into a client-side navigation,
// so they still work with the keyboard, open in new tabs and can be copied.
import type { ComponentChildren } from "preact"
import { useEffect, useState } from "preact/hooks"

export const BASE = "/console"

type Listener = () => void
const listeners = new Set<Listener>()

const notify = (): void => {
  for (const listener of listeners) listener()
}

if (typeof window !== "undefined") window.addEventListener("popstate", notify)

export const currentPath = (): string => {
  const path = location.pathname.replace(/\/+$/, "")
  return path === "" ? "/" : path
}

export const navigate = (to: string, options: { readonly replace?: boolean } = {}): void => {
  const now = location.pathname + location.search
  if (to === now) return
  if (options.replace === true) history.replaceState(null, "", to)
  else history.pushState(null, "", to)
  window.scrollTo(0, 0)
  notify()
}

/** The current path and search; re-renders on every navigation. */
export const useLocation = (): { readonly path: string; readonly search: URLSearchParams } => {
  const [, setTick] = useState(0)
  useEffect(() => {
    const listener = (): void => setTick((n) => n + 1)
    listeners.add(listener)
    return () => {
      listeners.delete(listener)
    }
  }, [])
  return { path: currentPath(), search: new URLSearchParams(location.search) }
}

/** Whether a click on `anchor` should become a client-side navigation. */
const isConsoleLink = (event: MouseEvent, anchor: HTMLAnchorElement): boolean => {
  if (event.defaultPrevented || event.button !== 0) return false
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return false
  if (anchor.target !== "" && anchor.target !== "_self") return false
  if (anchor.hasAttribute("download")) return false
  const url = new URL(anchor.href, location.href)
  if (url.origin !== location.origin) return false
  if (url.pathname !== BASE && !url.pathname.startsWith(`${BASE}/`)) return false
  // A link to a fragment of this page (the skip link) is the browser's.
  if (url.hash !== "" && url.pathname === location.pathname) return false
  // The console's API and assets are not pages.
  if (url.pathname.startsWith(`${BASE}/api/`) || url.pathname.startsWith(`${BASE}/assets/`)) return false
  return true
}

/** Installs the click interception once, on the document. */
export const interceptLinks = (): void => {
  document.addEventListener("click", (event) => {
    const target = event.target
    if (!(target instanceof Element)) return
    const anchor = target.closest("a")
    if (anchor === null || !isConsoleLink(event, anchor)) return
    event.preventDefault()
    const url = new URL(anchor.href, location.href)
    navigate(url.pathname + url.search)
  })
}

export interface LinkProps {
  readonly href: string
  readonly children?: ComponentChildren
  readonly class?: string
  readonly "data-testid"?: string
}

/** A link inside the console: marks itself as the current page when it is. */
export const Link = ({ href, children, ...rest }: LinkProps) => {
  const { path } = useLocation()
  const current = path === href || (href !== BASE && path.startsWith(`${href}/`))
  return (
    <a href={href} aria-current={current ? "page" : undefined} {...rest}>
      {children}
    </a>
  )
}

/** The page a path is: its name and parameters. */
export type Route =
  | { readonly page: "overview" }
  | { readonly page: "broadcasts" }
  | { readonly page: "broadcast"; readonly id: string }
  | { readonly page: "webhooks" }
  | { readonly page: "templates" }
  | { readonly page: "team" }
  | { readonly page: "developer" }
  | { readonly page: "sign-in" }
  | { readonly page: "ops" }
  | { readonly page: "not-found" }

export const matchRoute = (path: string): Route => {
  if (path === BASE || path === `${BASE}/overview`) return { page: "overview" }
  if (!path.startsWith(`${BASE}/`)) return { page: "not-found" }
  const rest = path.slice(BASE.length + 1).split("/")
  const [first, second, ...more] = rest
  if (more.length > 0) return { page: "not-found" }
  switch (first) {
    case "broadcasts":
      if (second === undefined) return { page: "broadcasts" }
      return { page: "broadcast", id: decodeURIComponent(second) }
    case "webhooks":
      return second === undefined ? { page: "webhooks" } : { page: "not-found" }
    case "templates":
      return second === undefined ? { page: "templates" } : { page: "not-found" }
    case "team":
      return second === undefined ? { page: "team" } : { page: "not-found" }
    case "settings":
      return second === "developer" ? { page: "developer" } : { page: "not-found" }
    case "sign-in":
      return second === undefined ? { page: "sign-in" } : { page: "not-found" }
    case "ops":
      return second === undefined ? { page: "ops" } : { page: "not-found" }
    default:
      return { page: "not-found" }
  }
}

/** Where to go after sign-in: a page of the console named by ?next=, else the overview. */
export const safeNext = (next: string | null): string => {
  if (next === null || !next.startsWith(`${BASE}`) || next.startsWith("//")) return BASE
  const route = matchRoute(next.split("?")[0]!.replace(/\/+$/, ""))
  return route.page === "sign-in" || route.page === "not-found" ? BASE : next
}
