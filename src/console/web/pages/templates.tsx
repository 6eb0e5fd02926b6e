// Templates: read-only, newest first (GET /api/v1/rcs/templates), with each bot's name.
import { useEffect, useState } from "preact/hooks"
import { api, query } from "../api.ts"
import { Loading, LoadError, StatusBadge, TableWrap } from "../components.tsx"
import { capitalise, Time } from "../format.tsx"
import { useLoad, useTitle } from "../hooks.ts"
import type { Bot, Page, Template } from "../types.ts"

type TemplatesAnswer = Page & { readonly templates: ReadonlyArray<Template> }

export const TemplatesPage = () => {
  useTitle("Templates")
  const first = useLoad((signal) => api.get<TemplatesAnswer>(`/rcs/templates${query({ limit: 100 })}`, signal), [])
  const bots = useLoad((signal) => api.get<{ readonly bots: ReadonlyArray<Bot> }>("/rcs/bots", signal), [])
  const [rows, setRows] = useState<ReadonlyArray<Template>>([])
  const [cursor, setCursor] = useState<string | undefined>(undefined)
  const [more, setMore] = useState<{ readonly busy: boolean; readonly error: unknown }>({ busy: false, error: undefined })

  useEffect(() => {
    if (first.data === undefined) return
    setRows(first.data.templates)
    setCursor(first.data.next_cursor)
  }, [first.data])

  const loadMore = async (): Promise<void> => {
    if (cursor === undefined) return
    setMore({ busy: true, error: undefined })
    try {
      const answer = await api.get<TemplatesAnswer>(`/rcs/templates${query({ limit: 100, cursor })}`)
      setRows((existing) => [...existing, ...answer.templates])
      setCursor(answer.next_cursor)
      setMore({ busy: false, error: undefined })
    } catch (cause) {
      setMore({ busy: false, error: cause })
    }
  }

  const botName = new Map((bots.data?.bots ?? []).map((b) => [b.bot_id, b.name]))
  return (
    <>
      <h1>Templates</h1>
      <p class="muted">Templates are made and deleted with the REST API (POST /api/v1/rcs/templates); here they are listed.</p>
      {first.data === undefined
        ? first.error !== undefined ? <LoadError error={first.error} retry={first.reload} /> : <Loading what="templates" />
        : rows.length === 0
        ? <p class="empty">No templates yet.</p>
        : (
          <>
            <TableWrap label="Templates">
              <table class="table">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Bot</th>
                    <th scope="col">Type</th>
                    <th scope="col">Status</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((t) => (
                    <tr key={t.template_id} data-testid={`template-${t.template_id}`}>
                      <th scope="row">{t.name}</th>
                      <td>{botName.get(t.bot_id) ?? <code>{t.bot_id}</code>}</td>
                      <td>{capitalise(t.type)}</td>
                      <td><StatusBadge status={t.status} /></td>
                      <td class="nowrap"><Time iso={t.created_at} /></td>
                    </tr>
                  ))}
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
    </>
  )
}
