import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { openApiDocument } from "../../src/http/openApiDocument.ts"

// The OpenAPI document Herald serves, linted by a real linter: Redocly CLI with its recommended
// rules, as configured by redocly.yaml at the repository's root (examples must match their
// schemas). Built in-process, exactly as GET /api/v1/openapi.json serves it; no server needed.

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const REDOCLY = join(ROOT, "node_modules/@redocly/cli/bin/cli.js")

interface Problem {
  readonly ruleId: string
  readonly severity: "error" | "warn"
  readonly message: string
  readonly location: ReadonlyArray<{ readonly pointer: string }>
}

const lint = (file: string) =>
  Effect.async<{ readonly problems: ReadonlyArray<Problem>; readonly stderr: string }, Error>((resume) => {
    execFile(
      process.execPath,
      [REDOCLY, "lint", file, "--config", join(ROOT, "redocly.yaml"), "--format", "json", "--max-problems", "100000"],
      {
        cwd: ROOT,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" }
      },
      // Exit status 1 means problems were found: the JSON report says which.
      (_error, stdout, stderr) => {
        try {
          resume(Effect.succeed({ problems: (JSON.parse(stdout) as { problems: ReadonlyArray<Problem> }).problems, stderr }))
        } catch {
          resume(Effect.fail(new Error(`redocly gave no report: ${stderr || stdout}`)))
        }
      }
    )
  })

describe("the OpenAPI document", () => {
  it.effect("passes redocly lint with the recommended rules, without an error or a warning", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "herald-openapi-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const file = join(dir, "openapi.json")
      writeFileSync(file, JSON.stringify(openApiDocument(), null, 2))
      const { problems, stderr } = yield* lint(file)
      const shown = problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? "?"}: ${p.message}`)
      expect(shown, stderr).toEqual([])
    }).pipe(Effect.scoped), 120_000)
})
