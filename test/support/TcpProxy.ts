import { createServer, type Server, type Socket, connect } from "node:net"

/**
 * A TCP forwarder a test can switch on and off: with it off, its port refuses connections (the
 * dependency is "down"); switching it off also cuts every open connection (the dependency died).
 */
export class TcpProxy {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()

  private constructor(readonly port: number, private readonly target: { host: string; port: number }) {}

  static async reserve(target: { host: string; port: number }): Promise<TcpProxy> {
    return new TcpProxy(await freePort(), target)
  }

  async up(): Promise<void> {
    if (this.server) return
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host)
      this.sockets.add(client).add(upstream)
      const drop = () => {
        client.destroy()
        upstream.destroy()
        this.sockets.delete(client)
        this.sockets.delete(upstream)
      }
      client.on("error", drop).on("close", drop)
      upstream.on("error", drop).on("close", drop)
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve, reject) => server.once("error", reject).listen(this.port, "127.0.0.1", resolve))
    this.server = server
  }

  async down(): Promise<void> {
    const server = this.server
    this.server = undefined
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
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
