import { createServer, type Server, type Socket, connect } from "node:net"

/** One accepted connection and, once forwarded, its upstream. */
interface Link {
  readonly client: Socket
  upstream: Socket | undefined
}

/**
 * A TCP forwarder a test can switch on and off: with it off, its port refuses connections (the
 * dependency is "down"); switching it off also cuts every open connection (the dependency died).
 *
 * It can also black-hole the path without closing anything (`cut`): a network partition, not a
 * crash. Nothing is forwarded either way; the sockets stay open and are not read, so what either
 * side writes waits in the socket buffers (and, once those fill, in the writer) and is delivered
 * when the cut heals, as TCP retransmits after a partition. Connections made during the cut are
 * accepted and held, not forwarded: the client sees a connect that succeeds and a server that
 * never speaks.
 */
export class TcpProxy {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  private readonly links = new Set<Link>()
  private isCut = false

  private constructor(readonly port: number, private readonly target: { host: string; port: number }) {}

  static async reserve(target: { host: string; port: number }): Promise<TcpProxy> {
    return new TcpProxy(await freePort(), target)
  }

  /** Whether the proxy is black-holing (between `cut` and `heal`). */
  get cutOff(): boolean {
    return this.isCut
  }

  async up(): Promise<void> {
    if (this.server) return
    const server = createServer((client) => {
      const link: Link = { client, upstream: undefined }
      this.links.add(link)
      this.sockets.add(client)
      client.on("error", () => this.drop(link)).on("close", () => this.drop(link))
      if (this.isCut) client.pause()
      else this.forward(link)
    })
    await new Promise<void>((resolve, reject) => server.once("error", reject).listen(this.port, "127.0.0.1", resolve))
    this.server = server
  }

  async down(): Promise<void> {
    const server = this.server
    this.server = undefined
    this.isCut = false
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
    this.links.clear()
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  /** Stops forwarding in both directions, closing nothing (see the class comment). */
  cut(): void {
    if (this.isCut) return
    this.isCut = true
    for (const { client, upstream } of this.links) {
      if (upstream === undefined) continue
      // Unpiped first: a pipe resumes its source when the destination drains.
      client.unpipe(upstream)
      upstream.unpipe(client)
      client.pause()
      upstream.pause()
    }
  }

  /** Forwards again: what waited on either side flows, held connections are forwarded now. */
  heal(): void {
    if (!this.isCut) return
    this.isCut = false
    for (const link of this.links) {
      if (link.upstream === undefined) this.forward(link)
      else {
        link.client.pipe(link.upstream)
        link.upstream.pipe(link.client)
      }
    }
  }

  private forward(link: Link) {
    const upstream = connect(this.target.port, this.target.host)
    link.upstream = upstream
    this.sockets.add(upstream)
    upstream.on("error", () => this.drop(link)).on("close", () => this.drop(link))
    link.client.pipe(upstream).pipe(link.client)
  }

  private drop(link: Link) {
    link.client.destroy()
    link.upstream?.destroy()
    this.sockets.delete(link.client)
    if (link.upstream) this.sockets.delete(link.upstream)
    this.links.delete(link)
  }
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject).listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
