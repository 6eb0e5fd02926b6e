import { Options } from "@effect/cli"
import { Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { loggingLayer } from "../observability/Logging.ts"
import { withDefault } from "./help.ts"

/** What a simulator process (`herald gateway-sim`, `herald smtp-sim`) listens on. */
export const hostOption = Options.text("host").pipe(
  Options.withDescription("interface to listen on"),
  withDefault("0.0.0.0", "0.0.0.0, so that other processes and containers reach it")
)

/** Settings from the environment, and logs on stderr so that stdout carries only the JSON line. */
export const SimulatorBase = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(AppConfig.make(config), loggingLayer({ format: config.logFormat, level: config.logLevel, stderr: true })))
).pipe(Layer.provide(AppConfig.layer))
