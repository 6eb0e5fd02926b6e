import { Layer } from "effect"
import { ClusterView } from "../actors/runtime/ClusterView.ts"
import { PoisonQueue } from "../actors/runtime/poison.ts"
import { serveApi } from "../http/adapter/apiRoutes.ts"
import { LiveHub } from "../live/LiveHub.ts"
import { SecretBox } from "../crypto/SecretBox.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { ConsoleApi } from "./ConsoleApi.ts"
import { ConsoleCookies } from "./consoleCookies.ts"
import { ConsoleGateLive } from "./ConsoleGate.ts"
import { ConsoleHttpLive } from "./ConsoleHttp.ts"
import { ConsolePages } from "./ConsolePages.ts"
import { ConsoleSessions } from "./ConsoleSessions.ts"
import { LiveRoute } from "./LiveRoute.ts"
import { OpsAccess } from "./OpsAccess.ts"

/**
 * The console on an API node (docs/console.md): its page and files, its own routes (session,
 * operator view), its live stream, and the gate through which it calls the REST API. It needs the
 * REST API's services (sign-in, broadcasts), which the node's route layers provide.
 */
export const ConsoleLive = Layer.mergeAll(serveApi(ConsoleApi), LiveRoute, ConsolePages, ConsoleGateLive).pipe(
  Layer.provide(ConsoleHttpLive),
  Layer.provideMerge(Layer.mergeAll(ConsoleSessions.Default, OpsAccess.Default, ClusterView.Default, PoisonQueue.Default, LiveHub.Default)),
  Layer.provideMerge(ConsoleCookies.Default),
  Layer.provide(Layer.merge(SecretBox.Default, ChangeFeed.Default))
)
