import { Context } from "effect"
import type { CloudTransport } from "./cloud/CloudApiGateway.ts"
import type { Transport } from "./rbm/RbmGateway.ts"

/**
 * The gateway simulator running in this process (src/simulator), as the adapters reach it: the
 * `layerSimulated` of RcsGateway, WaGateway and CapiGateway need it, the simulator's in-process
 * layer provides it. The adapters still speak the real wire to it, so the simulator exercises it.
 */
export class SimulatedUpstream extends Context.Tag("herald/SimulatedUpstream")<SimulatedUpstream, {
  /** Base URL of the simulator's HTTP server: RBM, the WhatsApp Cloud API and the Conversions API. */
  readonly url: string
  /** GATEWAY_SIM_TRANSPORT=direct: the RBM adapter's exchanges as calls into the simulator, no sockets. */
  readonly rbmTransport: Transport | undefined
  /** GATEWAY_SIM_TRANSPORT=direct: the Cloud API adapter's exchanges likewise. */
  readonly cloudTransport: CloudTransport | undefined
}>() {}

/** The SMTP sink running in this process (src/simulator/smtp), as `EmailRelay.layerSink` reaches it. */
export class SimulatedSmtp extends Context.Tag("herald/SimulatedSmtp")<SimulatedSmtp, {
  /** `smtp://127.0.0.1:<port>`. */
  readonly url: string
}>() {}
