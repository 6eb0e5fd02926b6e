const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}$/
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/** A domain name as identities and addresses carry it: lower case, at least two labels. */
export const parseDomain = (raw: string): string | undefined => {
  const domain = raw.trim().toLowerCase().replace(/\.$/, "")
  if (domain.length > 253) return undefined
  const labels = domain.split(".")
  return labels.length >= 2 && labels.every((label) => LABEL.test(label)) && !/^\d+$/.test(labels[labels.length - 1]!) ? domain : undefined
}

/**
 * An address as Herald stores and compares it: `local@domain`, lower-cased whole (SES compares
 * identities and suppressed addresses without case, and so do the sandbox's checks). Display
 * names (`Name <a@b>`) are not addresses here: the API takes bare addresses.
 */
export const parseAddress = (raw: string): string | undefined => {
  const text = raw.trim()
  const at = text.lastIndexOf("@")
  if (at <= 0 || text.length > 320) return undefined
  const local = text.slice(0, at)
  const domain = parseDomain(text.slice(at + 1))
  if (!LOCAL.test(local) || local.startsWith(".") || local.endsWith(".") || local.includes("..") || domain === undefined) return undefined
  return `${local.toLowerCase()}@${domain}`
}

export const domainOf = (address: string) => address.slice(address.lastIndexOf("@") + 1)
