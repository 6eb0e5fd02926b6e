#!/usr/bin/env node
// Writes the JSON rendering of Meta's OpenAPI document next to it. Herald reads the JSON at run
// time (parsing the YAML costs about a second of one core, on the event loop of the node that
// starts the simulator); test/whatsapp/metaSchema.test.ts checks the two stay the same document.
//   node vendor/meta/derive-json.mjs
import { readFileSync, writeFileSync } from "node:fs"
import { parse } from "yaml"

const yaml = new URL("./whatsapp-business-messaging-api_v23.0.yaml", import.meta.url)
const json = new URL("./whatsapp-business-messaging-api_v23.0.json", import.meta.url)
writeFileSync(json, JSON.stringify(parse(readFileSync(yaml, "utf8"))) + "\n")
