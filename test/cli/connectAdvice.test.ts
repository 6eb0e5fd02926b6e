import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { unreachableAdvice } from "../../src/cli/client/serverUrl.ts"

// What `herald connect` says when no server answers: the URL it tried, where that came from, and
// the --url to give (test/e2e/cli-connect.test.ts runs the command itself).

const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
const CAUSE = "connect ECONNREFUSED 127.0.0.1:8080"

describe("unreachableAdvice", () => {
  it.effect("the default without PORT: says PORT is not set and how a server's port makes the URL", () =>
    Effect.gen(function*() {
      const message = yield* unreachableAdvice("http://127.0.0.1:8080", false, CAUSE).pipe(withEnv({}))
      expect(message).toBe(
        "no server answers at http://127.0.0.1:8080 (the default: PORT is not set): connect ECONNREFUSED 127.0.0.1:8080. " +
          "Is Herald running? Start it (herald serve), or give its address with --url URL (a server started with PORT=N listens on http://127.0.0.1:N). " +
          "Nothing asked, nothing stored"
      )
    }))

  it.effect("the default from PORT: names that PORT", () =>
    Effect.gen(function*() {
      const message = yield* unreachableAdvice("http://127.0.0.1:9000", false, CAUSE).pipe(withEnv({ PORT: "9000" }))
      expect(message).toContain("no server answers at http://127.0.0.1:9000 (the default, from PORT=9000)")
      expect(message).toContain("give its address with --url URL")
    }))

  it.effect("--url elsewhere than PORT: suggests the URL PORT makes; at PORT's own URL, nothing more", () =>
    Effect.gen(function*() {
      const elsewhere = yield* unreachableAdvice("http://127.0.0.1:8080", true, CAUSE).pipe(withEnv({ PORT: "9000" }))
      expect(elsewhere).toContain("(given with --url)")
      expect(elsewhere).toContain("PORT is 9000 here: if that is the server's, give --url http://127.0.0.1:9000")
      const same = yield* unreachableAdvice("http://127.0.0.1:9000", true, CAUSE).pipe(withEnv({ PORT: "9000" }))
      expect(same).not.toContain("PORT is 9000 here")
      const notAPort = yield* unreachableAdvice("http://127.0.0.1:8080", true, CAUSE).pipe(withEnv({ PORT: "http" }))
      expect(notAPort).toContain("give its address with --url URL")
    }))
})
