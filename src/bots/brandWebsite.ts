/**
 * A brand's website as compared for uniqueness (DESIGN.md: scheme, case, trailing slash and "www"
 * do not make a different site): the host in lower case without a leading "www.", a port other
 * than the scheme's default, and the path without its trailing slash. Query and fragment are not
 * part of a site. "Brand.com", "http://www.brand.com/" and "https://BRAND.com" are one site.
 */
export const normaliseBrandWebsite = (input: string): { readonly site: string; readonly url: string } | { readonly problem: string } => {
  const trimmed = input.trim()
  if (trimmed.length === 0) return { problem: "a website is required" }
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`
  let url: URL
  try {
    url = new URL(withScheme)
  } catch {
    return { problem: "not a website address" }
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { problem: "a website address starts with http:// or https://" }
  if (url.username !== "" || url.password !== "") return { problem: "a website address carries no credentials" }
  const host = url.hostname.toLowerCase().replace(/^www\./, "").replace(/\.$/, "")
  if (!host.includes(".") || host.startsWith(".")) return { problem: "a website address names a domain, such as brand.com" }
  const port = url.port === "" ? "" : `:${url.port}`
  const path = url.pathname.replace(/\/+$/, "")
  return { site: `${host}${port}${path}`, url: `${url.protocol}//${url.host}${path}` }
}
