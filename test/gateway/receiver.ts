import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import { readRbmCallback, type RbmCallback, SIGNATURE_HEADER } from "../../src/gateway/rbm/callbacks.ts"

export interface Received {
  readonly body: string
  readonly signature: string | undefined
  /** The callback as Herald's edge would read it with the right token. */
  readonly read: RbmCallback
  readonly at: number
}

/**
 * A stand-in for Herald's RBM events endpoint: records every callback and answers what `answer`
 * says (200 unless told otherwise), so tests see exactly what the simulator sends.
 */
export const makeReceiver = (clientToken: string, answer: (n: number) => number = () => 200) =>
  Effect.acquireRelease(
    Effect.async<{ server: Server; received: Array<Received> }>((resume) => {
      const received: Array<Received> = []
      let n = 0
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8")
          const signature = req.headers[SIGNATURE_HEADER] as string | undefined
          const status = answer(n++)
          if (status >= 200 && status < 300) received.push({ body, signature, read: readRbmCallback(body, signature, clientToken), at: Date.now() })
          res.writeHead(status).end()
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, received })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  ).pipe(
    Effect.map(({ server, received }) => ({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/rcs/gateway/rbm/events`,
      received,
      /** The reports received so far, for a message, in arrival order. */
      statusesOf: (messageId: string) =>
        received.flatMap((r) => (r.read._tag === "Report" && r.read.report._tag === "Status" && r.read.report.messageId === messageId ? [r.read.report] : []))
    }))
  )

/** Polls `check` until it holds or `ms` pass (the assertion after it then says what is wrong). */
export const eventually = (check: () => boolean, ms = 3_000) =>
  Effect.promise(async () => {
    const until = Date.now() + ms
    while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
  })

export const pause = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))
