import { Schema } from "effect"
import { IMPORT_MAX_BYTES } from "./importLimits.ts"

/** An import body in a format Herald does not read (415 unsupported_media_type). */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  message: Schema.String
}) {
  static readonly of = (given: string | undefined) =>
    new UnsupportedMediaType({
      message: `${given === undefined || given === "" ? "no Content-Type" : `Content-Type ${given}`} is not an import format: ` +
        "send application/json, application/x-ndjson or text/csv (UTF-8)"
    })
}

/**
 * An import body past IMPORT_MAX_BYTES (413 payload_too_large, the code every other route's 10 MB
 * limit answers with). Whatever the import had written is rolled back.
 */
export class ImportTooLarge extends Schema.TaggedError<ImportTooLarge>()("ImportTooLarge", {
  message: Schema.String
}) {
  static readonly instance = () => new ImportTooLarge({ message: `an import body may be at most ${IMPORT_MAX_BYTES} bytes; split the file into several imports` })
}

/** The client stopped sending before the body's end; nothing of it is kept. */
export class UploadInterrupted extends Schema.TaggedError<UploadInterrupted>()("UploadInterrupted", {
  message: Schema.String
}) {
  static readonly instance = () => new UploadInterrupted({ message: "the upload ended before its body was complete; nothing was imported" })
}

/** The body stopped arriving for HERALD_IMPORT_IDLE_MS (408 request_timeout); nothing of it is kept. */
export class UploadStalled extends Schema.TaggedError<UploadStalled>()("UploadStalled", {
  message: Schema.String
}) {
  static readonly after = (idleMs: number) => new UploadStalled({ message: `the upload sent nothing for ${idleMs / 1000} s; nothing was imported` })
}
