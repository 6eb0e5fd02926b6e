import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { InvalidRequest } from "../domain/errors.ts"
import { SMTP_FEEDBACK_PATH } from "../gateway/EmailRelay.ts"
import { resolveCallbackUrl } from "../simulator/callbackSender.ts"
import { notFound } from "../simulator/httpHelpers.ts"
import { makeSmtpSink, SmtpSinkError } from "../simulator/smtp/SmtpSink.ts"
import { withDefault } from "./help.ts"
import { hostOption as host, SimulatorBase } from "./simulatorProcess.ts"

const port = Options.integer("port").pipe(
  Options.withDescription("SMTP port to listen on; 0 picks a free one. Default: SMTP_SIM_PORT when set, else 2525."),
  Options.optional
)
const httpPort = Options.integer("http-port").pipe(
  Options.withDescription("port of the control API (GET /simulate/smtp/messages?to=, /simulate/smtp/stats); 0 picks a free one"),
  withDefault(8091)
)
const callbackUrl = Options.text("callback-url").pipe(
  Options.withDescription("Herald API node to report complaints to: a base URL (the SMTP feedback path is appended) or the full feedback URL. When absent, complaints are reported to nobody."),
  Options.optional
)
/** The control API on a server of its own: standalone there is no gateway simulator to share. */
const serveControl = (handle: (req: IncomingMessage, res: ServerResponse, path: string, query: string) => boolean, port: number, host: string) =>
  Effect.acquireRelease(
    Effect.async<Server, SmtpSinkError>((resume) => {
      const server = createServer((req, res) => {
        const raw = req.url ?? "/"
        const q = raw.indexOf("?")
        if (handle(req, res, q === -1 ? raw : raw.slice(0, q), q === -1 ? "" : raw.slice(q + 1))) return
        req.resume()
        notFound(res)
      })
      server.once("error", (error) => resume(Effect.fail(new SmtpSinkError({ message: `smtp sink control API cannot listen on ${host}:${port}: ${error.message}` }))))
      server.listen(port, host, () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  )

/**
 * `herald smtp-sim`: the SMTP sink as a process of its own, for deployments of several Herald
 * nodes that all point SMTP_URL at it. Reports are signed with SMTP_FEEDBACK_SECRET from the
 * environment, like a node's. Prints one JSON line once listening; runs until SIGTERM or SIGINT,
 * which interrupt the program and so close the sink's scope with its connections.
 */
export const smtpSim = Command.make("smtp-sim", { port, httpPort, callbackUrl, host }, (input) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    let target: string | undefined
    if (Option.isSome(input.callbackUrl)) {
      target = resolveCallbackUrl(input.callbackUrl.value, SMTP_FEEDBACK_PATH)
      if (target === undefined) return yield* InvalidRequest.single("--callback-url", "must be an http or https URL")
    }
    const sink = yield* makeSmtpSink({
      port: Option.getOrElse(input.port, () => config.smtpSimPort),
      host: input.host,
      feedbackUrl: () => target,
      feedbackSecret: Redacted.value(config.smtpFeedbackSecret)
    })
    const control = yield* serveControl(sink.handleControl, input.httpPort, input.host)
    const controlPort = (control.address() as AddressInfo).port
    yield* Console.log(JSON.stringify({
      listening: true,
      url: sink.url,
      port: sink.port,
      http_url: `http://127.0.0.1:${controlPort}`,
      http_port: controlPort,
      host: input.host,
      callback_url: target ?? null
    }))
    return yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(SimulatorBase))).pipe(
    Command.withDescription("Run the SMTP sink alone (point SMTP_URL of every node at it); its control API on --http-port")
  )
