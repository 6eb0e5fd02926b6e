import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each file has its own database and NATS prefix, so files run in parallel processes.
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    reporters: ["default"],
    sequence: { hooks: "stack" }
  }
})
