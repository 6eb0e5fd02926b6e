import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The change feed (0006) for what a user token stands for, so nodes can cache it: a membership's
 * role, scope or removal, and a person's token cut-off (tokens_valid_after, moved by a password
 * change or reset) or e-mail. A person belongs to several accounts; their change is announced to
 * each of them.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TRIGGER memberships_changed AFTER INSERT OR UPDATE OR DELETE ON memberships
    FOR EACH ROW EXECUTE FUNCTION herald_notify_change()`
  yield* sql`
    CREATE FUNCTION herald_notify_person_change() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE account uuid;
    BEGIN
      FOR account IN
        SELECT account_id FROM accounts WHERE owner_user_id = NEW.user_id
        UNION SELECT account_id FROM memberships WHERE user_id = NEW.user_id
      LOOP
        PERFORM pg_notify('herald_changes', TG_TABLE_NAME || ':' || account::text);
      END LOOP;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER users_changed AFTER UPDATE OF tokens_valid_after, email ON users
    FOR EACH ROW EXECUTE FUNCTION herald_notify_person_change()`
})
