// The playground page's own script (served by PlaygroundRoute.ts as a file, so the page's CSP allows
// no inline script). It runs after the UMD builds that publish React, ReactDOM, graphqlWs and
// GraphiQL. Queries and mutations are POSTed to /api/v1/graphql with the headers panel's headers;
// subscriptions go over graphql-ws on the same path, the headers panel's object as connectionParams.
;(() => {
  "use strict"

  const ENDPOINT = "/api/v1/graphql"
  const SOCKET_URL = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${ENDPOINT}`
  const PLACEHOLDER = "Bearer sk_live_…"
  const DEFAULT_HEADERS = JSON.stringify({ Authorization: PLACEHOLDER }, null, 2)
  const DEFAULT_QUERY = [
    "# Herald's GraphQL API (docs/graphql.md). Replace the placeholder in the Headers panel",
    "# below with your secret key, then run the query (Ctrl-Enter).",
    "{",
    "  me {",
    "    label",
    "    plan",
    "  }",
    "}",
    ""
  ].join("\n")

  const authorizationOf = (headers) => {
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (name.toLowerCase() === "authorization" && typeof value === "string") return value.trim()
    }
    return undefined
  }
  /** Still the placeholder (or no key at all): answered here, not sent. */
  const lacksKey = (headers) => {
    const authorization = authorizationOf(headers)
    return authorization === undefined || authorization === "" || authorization.includes("…")
  }
  const NO_KEY = {
    errors: [{
      message: "Put your secret key in the Headers panel: {\"Authorization\": \"Bearer sk_live_…\"}",
      extensions: { code: "UNAUTHENTICATED" }
    }]
  }

  // Whether the request runs a subscription, read from the query's text with its strings and
  // comments blanked (an operation starts the text or follows a '}'). Not from GraphiQL's parsed
  // document: it is updated after a pause in typing, so a query run at once would go by the last.
  const SUBSCRIPTION_NAMED = (name) => new RegExp(`(?:^|\\})\\s*subscription\\s+${name.replace(/[^\w]/g, "")}\\b`)
  const isSubscription = (params) => {
    const text = String(params.query ?? "").replace(/"""[\s\S]*?"""|"(?:\\.|[^"\\])*"|#[^\n]*/g, " ")
    return params.operationName ? SUBSCRIPTION_NAMED(params.operationName).test(text) : /(?:^|\})\s*subscription\b/.test(text)
  }

  const overHttp = async (params, headers) => {
    const response = await fetch(ENDPOINT, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(params),
      credentials: "omit"
    })
    const text = await response.text()
    try {
      return JSON.parse(text)
    } catch {
      return { errors: [{ message: `HTTP ${response.status}: ${text.slice(0, 500)}` }] }
    }
  }

  // One graphql-ws client per distinct headers value: a client's connection_init carries the
  // headers it was made with. Lazy (connects with its first subscription, closes after the last);
  // no retries, so a refused key (4403) or a dropped socket shows at once in the result panel.
  const clients = new Map()
  const clientFor = (headers) => {
    const key = JSON.stringify(headers)
    let client = clients.get(key)
    if (client === undefined) {
      client = graphqlWs.createClient({ url: SOCKET_URL, connectionParams: headers, lazy: true, retryAttempts: 0 })
      clients.set(key, client)
    }
    return client
  }

  /** What graphql-ws rejects with (GraphQL errors, a CloseEvent, an Event, an Error) as GraphQL errors. */
  const errorsOf = (error) => {
    if (Array.isArray(error)) return error
    if (typeof error?.code === "number") return [{ message: `The socket closed: ${error.code}${error.reason ? ` ${error.reason}` : ""}` }]
    if (error instanceof Error) return [{ message: error.message }]
    return [{ message: `The socket to ${SOCKET_URL} failed` }]
  }

  /**
   * A subscription as the async iterable GraphiQL's fetcher contract accepts. The iterable is its
   * own iterator (GraphiQL's Stop calls `[Symbol.asyncIterator]().return()`); a failure becomes one
   * last result with its errors, so the panel shows why the subscription ended.
   */
  const overSocket = (params, headers) => {
    const inner = clientFor(headers).iterate({
      query: params.query,
      ...(params.variables ? { variables: params.variables } : {}),
      ...(params.operationName ? { operationName: params.operationName } : {})
    })
    let ended = false
    const iterator = {
      async next() {
        if (ended) return { done: true, value: undefined }
        try {
          return await inner.next()
        } catch (error) {
          ended = true
          return { done: false, value: { errors: errorsOf(error) } }
        }
      },
      async return() {
        ended = true
        return inner.return()
      },
      [Symbol.asyncIterator]() {
        return iterator
      }
    }
    return iterator
  }

  const fetcher = (params, opts) => {
    const headers = opts?.headers ?? {}
    if (lacksKey(headers)) return Promise.resolve(NO_KEY)
    return isSubscription(params) ? overSocket(params, headers) : overHttp(params, headers)
  }

  const parsedHeaders = (text) => {
    try {
      const value = JSON.parse(text)
      return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined
    } catch {
      return undefined
    }
  }

  // GraphiQL's history keeps each run's headers, the key among them, even with shouldPersistHeaders
  // false: the browser's storage gets the history without them (a history entry clicked after a
  // reload leaves the Headers panel empty) and never the headers themselves.
  const HISTORY_KEYS = ["graphiql:queries", "graphiql:favorites"]
  const withoutHeaders = (key, value) => {
    if (key === "graphiql:headers") return undefined
    if (!HISTORY_KEYS.includes(key)) return value
    try {
      const stored = JSON.parse(value)
      for (const items of Object.values(stored)) {
        if (Array.isArray(items)) for (const item of items) delete item.headers
      }
      return JSON.stringify(stored)
    } catch {
      return undefined
    }
  }
  const ours = () => Object.keys(localStorage).filter((key) => key.startsWith("graphiql:"))
  const storage = {
    getItem: (key) => localStorage.getItem(key),
    setItem: (key, value) => {
      const kept = withoutHeaders(key, value)
      if (kept === undefined) localStorage.removeItem(key)
      else localStorage.setItem(key, kept)
    },
    removeItem: (key) => localStorage.removeItem(key),
    clear: () => ours().forEach((key) => localStorage.removeItem(key)),
    get length() {
      return ours().length
    }
  }

  const Playground = () => {
    // GraphiQL introspects again when its fetcher changes: a fetcher per key typed in (once the
    // headers have settled) keeps the docs and completion in step with the key. Until a key is
    // typed in, there is no schema to fetch (schema null: GraphiQL does not introspect), so the
    // page opens on an empty result panel rather than on the answer to a request nobody made.
    const [authorization, setAuthorization] = React.useState(undefined)
    const current = React.useMemo(() => (params, opts) => fetcher(params, opts), [authorization])
    const timer = React.useRef(undefined)
    const onEditHeaders = React.useCallback((text) => {
      clearTimeout(timer.current)
      timer.current = setTimeout(() => {
        const headers = parsedHeaders(text)
        if (headers !== undefined && !lacksKey(headers)) setAuthorization(authorizationOf(headers))
      }, 500)
    }, [])
    return React.createElement(GraphiQL, {
      fetcher: current,
      schema: authorization === undefined ? null : undefined,
      defaultQuery: DEFAULT_QUERY,
      headers: DEFAULT_HEADERS,
      defaultHeaders: DEFAULT_HEADERS,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
      storage,
      defaultEditorToolsVisibility: "headers",
      onEditHeaders
    })
  }

  ReactDOM.createRoot(document.getElementById("graphiql")).render(React.createElement(Playground))
})()
