import { Args, Options } from "@effect/cli"

/**
 * How the help marks arguments and options. @effect/cli ends an optional one's help with "This
 * setting is optional." but says nothing of a required one, nor of a default: these helpers add
 * both, so that every argument and option of every command says which it is (the help test,
 * test/e2e/cli-help.test.ts, checks it against the usage line @effect/cli derives from the parser).
 */
export const REQUIRED = "This setting is required."

/** Marks a required option (@effect/cli refuses the command without it). */
export const required = <A>(self: Options.Options<A>): Options.Options<A> => Options.withDescription(self, REQUIRED)

/** Marks a required argument (@effect/cli refuses the command without it). */
export const requiredArg = <A>(self: Args.Args<A>): Args.Args<A> => Args.withDescription(self, REQUIRED)

/** An option that takes `value` when absent; its help says so (`shown`: how to write it, when not String(value)). */
export const withDefault = <A>(value: A, shown: string = String(value)) => (self: Options.Options<A>): Options.Options<A> =>
  self.pipe(Options.withDescription(`Default: ${shown}.`), Options.withDefault(value))
