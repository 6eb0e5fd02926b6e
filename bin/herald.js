#!/usr/bin/env node
// The `herald` command. Sources are TypeScript run through tsx's loader, so the package needs no
// build step; `node --enable-source-maps` stack traces point at the .ts files.
import { register } from "tsx/esm/api"

register()
await import("../src/main.ts")
