/**
 * Puts a dead letter `deliveryId` of endpoint `webhookId` straight into the database (an event and
 * its dead-letter item, as four failed attempts leave them), unless it is there already: a fixture
 * for the replay route without waiting out a real delivery's retries.
 */
export const putDeadLetter = (
  db: (text: string, values?: ReadonlyArray<unknown>) => Promise<unknown>,
  deliveryId: string,
  webhookId: string
) =>
  db(
    `WITH event AS (
       INSERT INTO webhook_events (account_id, type, bot_id, data)
       SELECT account_id, 'message.sent', bot_id, '{}' FROM webhooks
       WHERE webhook_id = $2 AND NOT EXISTS (SELECT 1 FROM webhook_dead_letters WHERE delivery_id = $1)
       RETURNING event_id, type, occurred_at)
     INSERT INTO webhook_dead_letters (delivery_id, webhook_id, account_id, event_type, url, reason, envelope, first_attempt_at, permanent_failure_at)
     SELECT $1, w.webhook_id, w.account_id, 'message.sent', w.url, 'HTTP 500 after 4 attempts',
            jsonb_build_object('event_id', e.event_id, 'type', e.type, 'occurred_at', e.occurred_at, 'delivery_id', $1::text, 'data', '{}'::jsonb), now(), now()
     FROM webhooks w, event e WHERE w.webhook_id = $2`,
    [deliveryId, webhookId]
  )
