import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The change feed: triggers NOTIFY `herald_changes` with `<table>:<account_id>` when a row that
 * nodes cache is written, whoever writes it (an API node, the CLI, an operator's psql). The
 * notification is sent at commit, so a node hears of a change only once it is visible.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION herald_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('herald_changes', TG_TABLE_NAME || ':' || COALESCE(NEW.account_id, OLD.account_id)::text);
      RETURN NULL;
    END $$`
  // last_used_at is not cached, so its once-a-minute writes do not invalidate anything.
  yield* sql`
    CREATE TRIGGER api_keys_changed AFTER UPDATE OF revoked_at, expires_at, scopes, account_id OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION herald_notify_change()`
  yield* sql`
    CREATE TRIGGER bots_changed AFTER INSERT OR UPDATE OR DELETE ON bots
    FOR EACH ROW EXECUTE FUNCTION herald_notify_change()`
  // Wallet movements (every charge) are not cached and must not flood the feed.
  yield* sql`
    CREATE TRIGGER accounts_changed AFTER UPDATE OF label, plan, plan_rate_per_minute, owner_user_id, secret_key_hash OR DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION herald_notify_change()`
})
