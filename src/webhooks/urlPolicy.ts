import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { BlockList, isIP } from "node:net"

// Targets a webhook may not reach unless WEBHOOK_ALLOW_PRIVATE=true: loopback, private,
// link-local (cloud metadata lives there), carrier-grade NAT, benchmarking, multicast, reserved.
const blocked = new BlockList()
for (const [network, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4]
] as const) blocked.addSubnet(network, prefix, "ipv4")
for (const [network, prefix] of [["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8]] as const) {
  blocked.addSubnet(network, prefix, "ipv6")
}

/** Whether an IP address is one a webhook may not reach by default (IPv4-mapped IPv6 included). */
export const isPrivateAddress = (address: string): boolean => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return blocked.check(mapped[1]!, "ipv4")
  const family = isIP(address)
  if (family === 0) return true
  return blocked.check(address, family === 4 ? "ipv4" : "ipv6")
}

const unbracket = (host: string) => host.startsWith("[") ? host.slice(1, -1) : host

/**
 * Why a subscription URL is refused, or undefined when it is acceptable: http or https only, no
 * credentials in the URL, and (unless private targets are allowed) no literal private address or
 * localhost. Names are checked again when connecting (`guardedLookup`), against DNS rebinding.
 */
export const urlProblem = (raw: string, allowPrivate: boolean): string | undefined => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "must be an absolute URL"
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use https or http"
  if (url.username !== "" || url.password !== "") return "must not carry credentials"
  if (raw.length > 2048) return "must be at most 2048 characters"
  if (allowPrivate) return undefined
  const host = unbracket(url.hostname).toLowerCase()
  if (host === "localhost" || host.endsWith(".localhost")) return "must not target a private or loopback address"
  if (isIP(host) !== 0 && isPrivateAddress(host)) return "must not target a private or loopback address"
  return undefined
}

/**
 * A `dns.lookup` for the webhook HTTP agent that fails when a name resolves to a private address:
 * the check happens at connect time, on the address actually connected to.
 */
export const guardedLookup = (allowPrivate: boolean) =>
  (hostname: string, options: object, callback: (error: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void) =>
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, [])
      const list = addresses as Array<LookupAddress>
      if (!allowPrivate && list.some((a) => isPrivateAddress(a.address))) {
        const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to a private address`)
        refused.code = "EPRIVATE"
        return callback(refused, [])
      }
      if ((options as { all?: boolean }).all) return callback(null, list)
      callback(null, list[0]!.address, list[0]!.family)
    })
