import pkg from "../../../package.json" with { type: "json" }

/** Herald's version, read from package.json once: `--version` and the client's User-Agent. */
export const HERALD_VERSION: string = pkg.version

/** What the client commands send as `User-Agent`. */
export const USER_AGENT = `herald-cli/${HERALD_VERSION}`
