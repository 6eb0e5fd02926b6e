#!/usr/bin/env node
// The `herald` command. Runs dist/herald.mjs, rebuilt from src/ first when a source is newer (a
// few hundred milliseconds with esbuild); where dist/ is not writable, as in the Docker image where
// it is built at image build time, the existing bundle is used.
import { buildBundle, bundlePath, clientBundlePath, isFresh, operatorBundlePath } from "./build.mjs"

/** Commands that only call a Herald server: they run from the client's own, much smaller bundle. */
const CLIENT_COMMANDS = new Set(["connect", "disconnect", "api", "contacts"])
/** The operator's one-shot commands (src/cli/operator.ts): from their own bundle too, without the server's modules. */
const OPERATOR_COMMANDS = new Set(["migrate", "admin"])

if (!isFresh()) {
  try {
    await buildBundle()
  } catch (error) {
    if (error?.code !== "EACCES" && error?.code !== "EROFS") throw error
  }
}
const command = process.argv[2] ?? ""
const bundle = CLIENT_COMMANDS.has(command) ? clientBundlePath : OPERATOR_COMMANDS.has(command) ? operatorBundlePath : bundlePath
// Only the server's bundle carries a source map (enabling them costs a one-shot command ~15 ms).
if (bundle === bundlePath) process.setSourceMapsEnabled(true)
await import(bundle)
