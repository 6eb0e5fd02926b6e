// Data hooks: a read that follows its inputs and can be done again, and a poll that pauses while
// the tab is hidden.
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { isAbort } from "./api.ts"

export interface Loaded<T> {
  readonly data: T | undefined
  readonly error: unknown
  readonly loading: boolean
  /** Reads again; the data shown stays until the answer comes. */
  readonly reload: () => void
  /** Changes the data in place (after a write whose answer says what changed). */
  readonly setData: (update: (data: T | undefined) => T | undefined) => void
}

export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: ReadonlyArray<unknown>): Loaded<T> {
  const [data, setDataState] = useState<T | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [loading, setLoading] = useState(true)
  const [generation, setGeneration] = useState(0)
  const loadRef = useRef(load)
  loadRef.current = load

  useEffect(() => {
    const controller = new AbortController()
    setLoading(true)
    loadRef.current(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return
        setDataState(value)
        setError(undefined)
        setLoading(false)
      },
      (cause: unknown) => {
        if (controller.signal.aborted || isAbort(cause)) return
        setError(cause)
        setLoading(false)
      }
    )
    return () => controller.abort()
  }, [...deps, generation])

  const reload = useCallback(() => setGeneration((n) => n + 1), [])
  const setData = useCallback((update: (data: T | undefined) => T | undefined) => setDataState(update), [])
  return { data, error, loading, reload, setData }
}

/** Runs `tick` every `ms` while the page is visible, and at once when it becomes visible again. */
export function useInterval(tick: () => void, ms: number, enabled = true): void {
  const tickRef = useRef(tick)
  tickRef.current = tick
  useEffect(() => {
    if (!enabled) return
    const id = window.setInterval(() => {
      if (!document.hidden) tickRef.current()
    }, ms)
    const onVisible = (): void => {
      if (!document.hidden) tickRef.current()
    }
    document.addEventListener("visibilitychange", onVisible)
    return () => {
      window.clearInterval(id)
      document.removeEventListener("visibilitychange", onVisible)
    }
  }, [ms, enabled])
}

/** Sets the document's title while the page is shown. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Herald console`
  }, [title])
}

/** The width of an element, kept up to date (0 before it is laid out). */
export function useWidth<E extends HTMLElement>(): [{ current: E | null }, number] {
  const ref = useRef<E | null>(null)
  const [width, setWidth] = useState(0)
  useEffect(() => {
    const element = ref.current
    if (element === null) return
    setWidth(element.clientWidth)
    if (typeof ResizeObserver === "undefined") return
    const observer = new ResizeObserver(() => setWidth(element.clientWidth))
    observer.observe(element)
    return () => observer.disconnect()
  }, [])
  return [ref, width]
}
