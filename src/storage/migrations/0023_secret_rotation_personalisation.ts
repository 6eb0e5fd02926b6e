import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Webhook secret rotation and broadcast personalisation.
 *
 * - A rotated endpoint keeps its former secret, stored as the current one is (signing needs it),
 *   until `previous_secret_expires_at`: until then every request carries a signature under each
 *   (Standard Webhooks, several `v1,` values in `webhook-signature`). The change feed's trigger on
 *   `webhooks` tells delivery workers' caches of the rotation; the expiry needs no write, senders
 *   compare it with the time of the attempt.
 * - A broadcast whose template has `{{…}}` placeholders keeps its default values (`variables`,
 *   NULL when the template has none), and each target the values its contact gave for those
 *   placeholders only (`vars`, copied with the phone when the target is written; NULL when the
 *   broadcast has no placeholders), so a send never reads the contact list again.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhooks ADD COLUMN previous_secret text`
  yield* sql`ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at timestamptz`
  yield* sql`ALTER TABLE broadcasts ADD COLUMN variables jsonb`
  yield* sql`ALTER TABLE broadcast_targets ADD COLUMN vars jsonb`
})
