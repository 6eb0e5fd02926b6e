/**
 * A Content-Type header read for what Herald decides on: the media type (lower case, parameters
 * dropped) and whether its charset, if it names one, is UTF-8, the only encoding bodies are read in.
 */
export const mediaTypeOf = (contentType: string): { readonly type: string; readonly utf8: boolean } => {
  const [type = "", ...parameters] = contentType.split(";").map((part) => part.trim().toLowerCase())
  const charset = parameters.find((p) => p.startsWith("charset="))?.slice("charset=".length).replace(/"/g, "")
  return { type, utf8: charset === undefined || charset === "utf-8" || charset === "utf8" }
}
