import { Schema } from "effect"

/** 409 capi_not_configured: the account has no Conversions API dataset and token to forward to. */
export class CapiNotConfigured extends Schema.TaggedError<CapiNotConfigured>()("CapiNotConfigured", { message: Schema.String }) {}
