import http from "node:http"

export interface Received {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

/**
 * A local webhook consumer. The path decides the answer: /ok → 200, /status/<code> → that code
 * (3xx with a Location), /hang → never answers. Every request is recorded.
 */
export const startConsumer = async () => {
  const received: Array<Received> = []
  const server = http.createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      const path = req.url ?? "/"
      received.push({ path, headers: req.headers, body, at: Date.now() })
      if (path.startsWith("/hang")) return
      const status = path.startsWith("/status/") ? Number(path.split("/")[2]) : 200
      res.writeHead(status, status >= 300 && status < 400 ? { location: "http://127.0.0.1:1/elsewhere" } : { "content-type": "text/plain" })
      res.end(status === 200 ? "ok" : `answer ${status}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
