import { API_KEY_PREFIX, PANEL_SCOPE_GRANTS, PANEL_SCOPES } from "../../domain/access.ts"
import type { CreatedApiKey } from "../../security/ApiKeys.ts"
import type { ApiKeyRow } from "../../security/ApiKeysRepo.ts"

/** An API key as the answers show it (never its hash, never the raw key but once). */
export const presentApiKey = (row: ApiKeyRow) => ({
  key_id: row.keyId,
  name: row.name,
  prefix: API_KEY_PREFIX,
  last_four: row.lastFour,
  scopes: row.scopes,
  created_at: new Date(row.createdAt).toISOString(),
  created_by: row.createdBy,
  last_used_at: row.lastUsedAt ? new Date(row.lastUsedAt).toISOString() : null,
  expires_at: row.expiresAt ? new Date(row.expiresAt).toISOString() : null,
  revoked: row.revokedAt !== null
})

export const presentCreatedApiKey = (created: CreatedApiKey) => ({
  success: true as const,
  key_id: created.key.keyId,
  raw_key: created.rawKey,
  warning: "Store this key now: it is shown only once and cannot be recovered.",
  key: presentApiKey(created.key)
})

export const presentApiKeyList = (rows: ReadonlyArray<ApiKeyRow>) => ({
  success: true as const,
  keys: rows.map(presentApiKey),
  available_scopes: [...PANEL_SCOPES],
  grants_today: PANEL_SCOPE_GRANTS
})
