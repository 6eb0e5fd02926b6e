import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * WhatsApp campaigns on the broadcast engine (docs/campaigns.md): a campaign is a broadcast of
 * channel `whatsapp`, sent from one of the account's numbers (phone_number_id) to an audience of
 * customers (`audience`: a trait query or customer ids, frozen when the campaign is created). Its
 * targets carry the customer they were written from; a customer who opted out is written
 * `skipped`, counted in skipped_count and never sent or charged.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE broadcasts ADD COLUMN channel text NOT NULL DEFAULT 'rcs' CHECK (channel IN ('rcs', 'whatsapp'))`
  yield* sql`ALTER TABLE broadcasts ALTER COLUMN bot_id DROP NOT NULL, ALTER COLUMN list_id DROP NOT NULL`
  yield* sql`ALTER TABLE broadcasts ADD COLUMN phone_number_id text REFERENCES wa_numbers ON DELETE CASCADE`
  yield* sql`ALTER TABLE broadcasts ADD COLUMN audience jsonb`
  yield* sql`
    ALTER TABLE broadcasts ADD CONSTRAINT broadcasts_channel_fields CHECK (
      (channel = 'rcs' AND bot_id IS NOT NULL AND list_id IS NOT NULL)
      OR (channel = 'whatsapp' AND phone_number_id IS NOT NULL AND audience IS NOT NULL))`
  // Each surface lists one channel's broadcasts (RCS broadcasts, WhatsApp campaigns).
  yield* sql`DROP INDEX broadcasts_account_idx`
  yield* sql`CREATE INDEX broadcasts_account_idx ON broadcasts (account_id, channel, created_at DESC, broadcast_id DESC)`
  yield* sql`ALTER TABLE broadcast_counters ADD COLUMN skipped_count integer NOT NULL DEFAULT 0`
  yield* sql`ALTER TABLE broadcast_targets ADD COLUMN customer_id uuid`
  yield* sql`ALTER TABLE broadcast_targets DROP CONSTRAINT broadcast_targets_status_check`
  yield* sql`
    ALTER TABLE broadcast_targets ADD CONSTRAINT broadcast_targets_status_check
    CHECK (status IN ('pending', 'unconfirmed', 'sent', 'delivered', 'read', 'failed', 'cancelled', 'skipped'))`
  // A campaign's targets are written from the account's customers in customer_id order, a batch
  // at a time: without this the batch would walk every account's customers.
  yield* sql`CREATE INDEX customers_account_id_idx ON customers (account_id, customer_id)`
  // A campaign's broadcast.completed goes to the developer webhook, which takes every WhatsApp event.
  yield* sql`
    UPDATE webhooks SET events = events || ARRAY['broadcast.completed']
    WHERE channel = 'whatsapp' AND NOT 'broadcast.completed' = ANY(events)`
})
