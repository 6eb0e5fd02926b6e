import {
  ACCEPTED_MEDIA,
  type ContentCheck,
  MEDIA_SIZE_MAX_BYTES,
  type MediaKind,
  mediaKindOfContentType,
  mediaKindOfUrl,
  PDF_WARNING
} from "../domain/contentLimits.ts"
import type { ProbeOutcome } from "./mediaProbe.ts"

export interface MediaVerdict extends ContentCheck {
  /** The answer named an accepted type, so a warning that the URL did not tell the type is moot. */
  readonly typeKnown: boolean
}

/**
 * What a media URL's HEAD answer means for a template (pure): over 100 MB or a type RBM does not
 * take is an error; an answer that could not be had is only a warning, since the host may still
 * serve the file to RBM later; a target Herald may not reach is an error.
 */
export const judgeMedia = (path: string, url: string, outcome: ProbeOutcome): MediaVerdict => {
  switch (outcome._tag) {
    case "Refused":
      return { errors: [`${path}: ${outcome.reason}`], warnings: [], typeKnown: false }
    case "Unchecked":
      return { errors: [], warnings: [`${path}: media could not be checked: ${outcome.reason}`], typeKnown: false }
    case "Answered":
      return answered(path, mediaKindOfUrl(url), outcome)
  }
}

const answered = (path: string, urlKind: MediaKind, outcome: { readonly contentType: string | undefined; readonly contentLength: number | undefined }): MediaVerdict => {
  const errors: Array<string> = []
  const warnings: Array<string> = []
  if (outcome.contentLength !== undefined && outcome.contentLength > MEDIA_SIZE_MAX_BYTES) {
    errors.push(`${path}: media is ${outcome.contentLength} bytes, at most ${MEDIA_SIZE_MAX_BYTES} (100 MB)`)
  }
  const kind = mediaKindOfContentType(outcome.contentType)
  // The URL's extension already gave its verdict on PDF and on refused types: say it once.
  if (kind === "unsupported" && urlKind !== "unsupported") {
    errors.push(`${path}: served as ${outcome.contentType}, which RBM does not accept (RBM takes ${ACCEPTED_MEDIA})`)
  }
  if (kind === "pdf" && urlKind !== "pdf") warnings.push(`${path}: ${PDF_WARNING}`)
  return { errors, warnings, typeKnown: kind !== "unknown" }
}
