import { Prompt } from "@effect/cli"
import { Effect, Schema } from "effect"
import { connect, type JetStreamManager, type NatsConnection, type StreamInfo } from "nats"
import { makeBusNames } from "../bus/BusNames.ts"
import { connectionOptions, NatsUnavailable } from "../bus/Nats.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { printJson } from "./output.ts"

/** Nodes of the deployment are running: nats-clean would pull their streams from under them. */
export class NodesRunning extends Schema.TaggedError<NodesRunning>()("NodesRunning", {
  message: Schema.String,
  nodes: Schema.Array(Schema.String)
}) {}

/** The operator did not confirm (answered no, or nothing, without --yes). */
export class NotConfirmed extends Schema.TaggedError<NotConfirmed>()("NotConfirmed", { message: Schema.String }) {}

export interface StreamSummary {
  readonly name: string
  readonly subjects: ReadonlyArray<string>
  readonly messages: number
  readonly consumers: number
}

export interface CleanPlan {
  /** The deployment's streams: one per actor kind (`<PREFIX>_<KIND>`, subjects `<prefix>.<kind>.>`). */
  readonly streams: ReadonlyArray<StreamSummary>
  /** The deployment's KV buckets (`<prefix>_<name>`), each held in the stream `KV_<bucket>`. */
  readonly buckets: ReadonlyArray<StreamSummary & { readonly bucket: string }>
  /** Streams whose names start as the deployment's do but that belong to another one: left alone. */
  readonly skipped: ReadonlyArray<{ readonly name: string; readonly why: string }>
}

/** A bucket name of Herald's own (BusNames.bucket's `<name>`: `leases`, `nodes`) holds no `_`. */
const OWN_BUCKET_NAME = /^[A-Za-z0-9-]+$/

/**
 * Which of the server's streams are the deployment's of `prefix`, by name and by what they hold.
 * A name alone cannot tell: prefixes may hold `_`, so `herald_b`'s stream `HERALD_B_DELIVERY` and
 * bucket `herald_b_nodes` also start as `herald`'s names do, and stream names are upper case, so
 * `Herald` and `herald` share them. A stream of the deployment carries only subjects under
 * `<prefix>.`; a bucket is `<prefix>_<name>` with a name of Herald's own.
 */
export const planClean = (prefix: string, streams: ReadonlyArray<StreamSummary>): CleanPlan => {
  const names = makeBusNames(prefix)
  const streamStart = names.stream("")
  const bucketStart = `KV_${names.bucket("")}`
  const own: Array<StreamSummary> = []
  const buckets: Array<StreamSummary & { readonly bucket: string }> = []
  const skipped: Array<{ name: string; why: string }> = []
  for (const stream of [...streams].sort((a, b) => a.name.localeCompare(b.name))) {
    if (stream.name.startsWith(bucketStart)) {
      const bucket = stream.name.slice("KV_".length)
      const rest = bucket.slice(names.bucket("").length)
      if (!OWN_BUCKET_NAME.test(rest)) skipped.push({ name: stream.name, why: `after ${prefix}_ comes "${rest}", no bucket name of Herald's: another deployment's` })
      else if (!stream.subjects.every((s) => s === `$KV.${bucket}.>`)) skipped.push({ name: stream.name, why: `its subjects (${stream.subjects.join(", ")}) are not the bucket's` })
      else buckets.push({ ...stream, bucket })
    } else if (stream.name.startsWith(streamStart)) {
      if (stream.subjects.length > 0 && stream.subjects.every((s) => s.startsWith(`${prefix}.`))) own.push(stream)
      else skipped.push({ name: stream.name, why: `its subjects (${stream.subjects.join(", ")}) are not under ${prefix}.` })
    }
  }
  return { streams: own, buckets, skipped }
}

const summary = (info: StreamInfo): StreamSummary => ({
  name: info.config.name,
  subjects: info.config.subjects ?? [],
  messages: info.state.messages,
  consumers: info.state.consumer_count
})

const unavailable = (what: string) => (cause: unknown) =>
  new NatsUnavailable({ message: `NATS ${what} failed: ${cause instanceof Error ? cause.message : String(cause)}` })

const isStreamNotFound = (cause: unknown) =>
  (cause as { api_error?: { err_code?: number } })?.api_error?.err_code === 10059 || /stream not found/i.test(String((cause as Error)?.message))

/**
 * The deployment's live nodes, as they announce themselves: each worker (role all or worker)
 * renews its entry in the `<prefix>_nodes` bucket every 2 s, and an entry not renewed for 6 s is
 * gone (src/actors/runtime/membership.ts). Read from the bucket's stream state, as the nodes do.
 */
const liveNodes = (jsm: JetStreamManager, prefix: string) =>
  Effect.tryPromise({
    try: async () => {
      const bucket = makeBusNames(prefix).bucket("nodes")
      const stream = `KV_${bucket}`
      const subjectPrefix = `$KV.${bucket}.`
      const info = await jsm.streams.info(stream, { subjects_filter: `${subjectPrefix}>` }).catch((cause) => {
        if (isStreamNotFound(cause)) return undefined
        throw cause
      })
      const nodes: Array<string> = []
      for (const subject of Object.keys(info?.state.subjects ?? {}).sort()) {
        const id = subject.slice(subjectPrefix.length)
        const described = await jsm.streams.getMessage(stream, { last_by_subj: subject }).then(
          (message) => {
            const node = message.json<{ role?: string; host?: string; pid?: number }>()
            return `${id} (${node.role ?? "?"} on ${node.host ?? "?"}, pid ${node.pid ?? "?"})`
          },
          () => id
        )
        nodes.push(described)
      }
      return nodes
    },
    catch: unavailable("membership read")
  })

const refuseWhileRunning = (jsm: JetStreamManager, prefix: string) =>
  Effect.flatMap(liveNodes(jsm, prefix), (nodes) =>
    nodes.length === 0 ? Effect.void : new NodesRunning({
      message: `${nodes.length} node${nodes.length === 1 ? "" : "s"} of the deployment ${prefix} ${nodes.length === 1 ? "is" : "are"} running: ${nodes.join(", ")}. ` +
        "Stop every node of it first (API-only nodes too: they do not announce themselves); nothing removed",
      nodes
    }))

/** The first line of standard input, for a confirmation piped in (`echo yes | herald admin nats-clean`). */
const readAnswerLine = Effect.promise(async () => {
  let text = ""
  for await (const chunk of process.stdin) {
    text += typeof chunk === "string" ? chunk : (chunk as Buffer).toString("utf8")
    if (text.includes("\n") || text.length > 1_024) break
  }
  return text.split("\n")[0]!.trim()
})

/** Yes at a prompt on a terminal, or `y`/`yes` as the first line of a pipe. */
const confirm = (question: string) =>
  process.stdin.isTTY
    ? Prompt.confirm({ message: question, initial: false }).pipe(
      Prompt.run,
      Effect.catchTag("QuitException", () => Effect.succeed(false))
    )
    : Effect.zipRight(
      Effect.sync(() => void process.stderr.write(`${question} [y/N] `)),
      Effect.map(readAnswerLine, (answer) => {
        process.stderr.write("\n")
        return /^y(es)?$/i.test(answer)
      })
    )

const described = (plan: CleanPlan) => {
  const messages = plan.streams.reduce((n, s) => n + s.messages, 0)
  const consumers = plan.streams.reduce((n, s) => n + s.consumers, 0)
  return `${plan.streams.length} stream${plan.streams.length === 1 ? "" : "s"} (${plan.streams.map((s) => s.name).join(", ") || "none"}; ` +
    `${messages} message${messages === 1 ? "" : "s"}, ${consumers} consumer${consumers === 1 ? "" : "s"}) and ` +
    `${plan.buckets.length} KV bucket${plan.buckets.length === 1 ? "" : "s"} (${plan.buckets.map((b) => b.bucket).join(", ") || "none"})`
}

const connectNats = Effect.flatMap(AppConfig, (config) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => connect({ ...connectionOptions(config), name: "herald-nats-clean", reconnect: false, timeout: 5_000 }),
      catch: (cause) =>
        new NatsUnavailable({ message: `cannot reach NATS at ${config.natsServers.join(", ")}: ${cause instanceof Error ? cause.message : String(cause)}` })
    }),
    (nc: NatsConnection) => Effect.promise(() => nc.close().catch(() => undefined))
  ))

/**
 * `herald admin nats-clean`'s work (src/cli/natsClean.ts loads this module when it runs): removes
 * the deployment's streams (their consumers with them) and KV buckets from NATS. It refuses while
 * nodes of the deployment are running, asks first (unless `yes`), and prints what it removed. It
 * needs NATS only: not the database (dropping the database removes what `herald migrate` made).
 */
export const natsClean = (input: { readonly yes: boolean }) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const prefix = config.natsPrefix
    const nc = yield* connectNats
    const jsm = yield* Effect.tryPromise({ try: () => nc.jetstreamManager(), catch: unavailable("JetStream") })
    yield* refuseWhileRunning(jsm, prefix)
    const infos = yield* Effect.tryPromise({
      try: async () => {
        const all: Array<StreamInfo> = []
        for await (const info of jsm.streams.list()) all.push(info)
        return all
      },
      catch: unavailable("stream list")
    })
    const plan = planClean(prefix, infos.map(summary))
    const skipped = plan.skipped
    if (plan.streams.length + plan.buckets.length === 0) {
      return yield* printJson({ prefix, nats: config.natsServers, removed: { streams: [], buckets: [], consumers: 0, messages: 0 }, skipped })
    }
    if (!input.yes) {
      const yes = yield* confirm(`Remove the deployment ${prefix}'s ${described(plan)} from NATS at ${config.natsServers.join(", ")}?`)
      if (!yes) return yield* new NotConfirmed({ message: "not confirmed (answer y, or pass --yes); nothing removed" })
    }
    // Nodes may have started while the question was open.
    yield* refuseWhileRunning(jsm, prefix)
    const removed: Array<StreamSummary> = []
    for (const stream of [...plan.streams, ...plan.buckets]) {
      const gone = yield* Effect.tryPromise({
        try: () => jsm.streams.delete(stream.name).catch((cause) => (isStreamNotFound(cause) ? false : Promise.reject(cause))),
        catch: (cause) =>
          unavailable(`removing ${stream.name} (removed before it: ${removed.map((s) => s.name).join(", ") || "none"})`)(cause)
      })
      if (gone) removed.push(stream)
    }
    const streams = plan.streams.filter((s) => removed.includes(s))
    const buckets = plan.buckets.filter((b) => removed.includes(b))
    yield* printJson({
      prefix,
      nats: config.natsServers,
      removed: {
        streams: streams.map((s) => s.name),
        buckets: buckets.map((b) => b.bucket),
        consumers: streams.reduce((n, s) => n + s.consumers, 0),
        messages: streams.reduce((n, s) => n + s.messages, 0)
      },
      skipped
    })
  }).pipe(Effect.scoped, Effect.provide(AppConfig.layer))
