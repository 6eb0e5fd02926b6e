import type { Server } from "node:http"
import type { Duplex } from "node:stream"

/**
 * Requests Node's HTTP parser refuses before any route runs (headers past its 16 KiB, a header
 * line without a colon, both Content-Length and Transfer-Encoding, a NUL in the request line, a
 * negative length, the headers not in within Node's `headersTimeout`) get the error envelope like
 * every other 4xx, not Node's bare status line; the connection is then closed, since what follows
 * on it cannot be read as a request.
 */
const answerOf = (error: NodeJS.ErrnoException & { readonly code?: string }): readonly [number, string, string, string] => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return [431, "Request Header Fields Too Large", "request_header_fields_too_large", "the request's headers are larger than 16 KiB"]
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [408, "Request Timeout", "request_timeout", "the request did not arrive in time"]
    default:
      return [400, "Bad Request", "invalid_request", "the request is not well-formed HTTP/1.1"]
  }
}

export const answerClientErrors = (server: Server): Server =>
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy()
      return
    }
    const [status, reason, code, message] = answerOf(error)
    const body = JSON.stringify({ success: false, code, message })
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
    )
  })
