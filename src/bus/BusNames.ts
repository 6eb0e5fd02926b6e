import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"

/**
 * Every NATS name Herald uses hangs off HERALD_NATS_PREFIX, so deployments and test runs that
 * share one NATS server never see each other's subjects, streams, consumers or buckets.
 */
export interface BusNamesShape {
  readonly prefix: string
  /** `<prefix>.<token>.<token>...` */
  readonly subject: (...tokens: ReadonlyArray<string | number>) => string
  /** Stream names are upper case by convention: `<PREFIX>_<NAME>`. */
  readonly stream: (name: string) => string
  /** KV bucket: `<prefix>_<name>`. */
  readonly bucket: (name: string) => string
}

export const makeBusNames = (prefix: string): BusNamesShape => ({
  prefix,
  subject: (...tokens) => [prefix, ...tokens].join("."),
  stream: (name) => `${prefix}_${name}`.toUpperCase(),
  bucket: (name) => `${prefix}_${name}`
})

export class BusNames extends Context.Tag("herald/BusNames")<BusNames, BusNamesShape>() {
  static readonly layer = Layer.effect(BusNames, Effect.map(AppConfig, (config) => makeBusNames(config.natsPrefix)))
}
