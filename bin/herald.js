#!/usr/bin/env node
// The `herald` command. Runs dist/herald.mjs, rebuilt from src/ first when a source is newer (a
// few hundred milliseconds with esbuild); where dist/ is not writable, as in the Docker image where
// it is built at image build time, the existing bundle is used.
import { buildBundle, bundlePath, clientBundlePath, isFresh } from "./build.mjs"

/** Commands that only call a Herald server: they run from the client's own, much smaller bundle. */
const CLIENT_COMMANDS = new Set(["connect", "disconnect", "api", "contacts"])

process.setSourceMapsEnabled(true)
if (!isFresh()) {
  try {
    await buildBundle()
  } catch (error) {
    if (error?.code !== "EACCES" && error?.code !== "EROFS") throw error
  }
}
await import(CLIENT_COMMANDS.has(process.argv[2] ?? "") ? clientBundlePath : bundlePath)
