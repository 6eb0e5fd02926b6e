import { api } from "./api.ts"
import { connect, disconnect } from "./connect.ts"
import { contacts } from "./contactsImport.ts"

/**
 * The client commands: they call a Herald server with a stored secret key and need no database or
 * NATS. Exit codes: src/cli/client/exitCodes.ts; reference: docs/cli.md.
 */
export const clientCommands = [connect, disconnect, api, contacts] as const
