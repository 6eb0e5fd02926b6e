import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Contact lists (docs/contact-lists.md): account-wide lists of recipients, imported in bulk and
 * read back in chunks by broadcasts.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE contact_lists (
      list_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
      -- Kept by each import batch in the batch's own statement, so a read never counts the rows.
      contact_count integer NOT NULL DEFAULT 0 CHECK (contact_count >= 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      -- Soft delete: the list leaves every read at once; its contacts stay for a broadcast
      -- already reading them.
      deleted_at timestamptz
    )`
  // The account's lists, newest first (DESIGN.md, Lists); names are unique among live lists.
  yield* sql`CREATE INDEX contact_lists_account_idx ON contact_lists (account_id, created_at DESC, list_id DESC) WHERE deleted_at IS NULL`
  yield* sql`CREATE UNIQUE INDEX contact_lists_name_idx ON contact_lists (account_id, name) WHERE deleted_at IS NULL`
  // contact_id orders a list stably, oldest first: the primary key (list_id, contact_id) is the
  // index a broadcast reads its list by, in chunks (WHERE list_id = $1 AND contact_id > $2 ORDER
  // BY contact_id LIMIT n), and the contacts page reads backwards. (list_id, phone) de-duplicates.
  yield* sql`
    CREATE TABLE contacts (
      list_id uuid NOT NULL REFERENCES contact_lists ON DELETE CASCADE,
      contact_id bigint GENERATED ALWAYS AS IDENTITY,
      -- E.164, normalised by the import.
      phone text NOT NULL,
      name text,
      params jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (list_id, contact_id),
      UNIQUE (list_id, phone)
    )`
})
