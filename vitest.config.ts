import { defineConfig } from "vitest/config"
import { SpreadHeavySequencer } from "./test/support/sequencer.ts"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The empty-disk replacement of a NATS server loses acknowledged messages on nats-server
    // 2.9.10 itself (test/cluster/nats-replace.test.ts, docs/operations.md): run by
    // `npm run test:cluster`, not by the suite every change must pass.
    exclude: ["**/node_modules/**", ...(process.env.HERALD_NATS_SERVER_FAULTS === "1" ? [] : ["test/cluster/nats-replace.test.ts", "test/cluster/nats-kill.test.ts"])],
    // Each file has its own database and NATS prefix, so files run in parallel processes, two at
    // a time on two cores. Three at once (each file runs one to six processes of its own) kept
    // the load average near 8: a file's timing windows (report windows, gateway timeouts, a
    // pool's 5 s for a connection) then passed 7 times slower than alone, and a different few
    // tests failed on each run. vitest's default here (cores - 1) would run one at a time.
    pool: "forks",
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 60_000,
    // Set-ups start nodes and run CLI processes: minutes when the heaviest files run beside them
    // on two cores. A ceiling, not a target (figures belong to bench/).
    hookTimeout: 300_000,
    teardownTimeout: 30_000,
    // In test/e2e, every answer of Herald's REST API is held to the OpenAPI document the node
    // serves (status declared, body valid against its schema); inert in the other files.
    setupFiles: ["test/support/openApiResponses.ts"],
    reporters: ["default"],
    sequence: { hooks: "stack", sequencer: SpreadHeavySequencer }
  }
})
