import type { SqlClient } from "@effect/sql"
import type { Effect } from "effect"
import identity from "./0001_identity.ts"
import actorRuntime from "./0002_actor_runtime.ts"
import signIn from "./0003_sign_in.ts"
import botsAndApiKeys from "./0004_bots_and_api_keys.ts"
import secretKeys from "./0005_secret_keys.ts"
import changeFeed from "./0006_change_feed.ts"
import webhooks from "./0007_webhooks.ts"
import botApplications from "./0008_bot_applications.ts"
import templates from "./0009_templates.ts"
import messaging from "./0010_messaging.ts"
import autoReplies from "./0011_auto_replies.ts"
import contactLists from "./0012_contact_lists.ts"
import broadcasts from "./0013_broadcasts.ts"
import tokenSubjectsFeed from "./0014_token_subjects_feed.ts"
import poisonBytes from "./0015_poison_bytes.ts"
import broadcastDoubt from "./0016_broadcast_doubt.ts"
import whatsapp from "./0017_whatsapp.ts"
import customersConversions from "./0018_customers_conversions.ts"
import graphqlReads from "./0019_graphql_reads.ts"
import appApi from "./0020_app_api.ts"
import outboxBatches from "./0021_outbox_batches.ts"
import partnerEmail from "./0022_partner_email.ts"
import secretRotationPersonalisation from "./0023_secret_rotation_personalisation.ts"
import messageStatusHistory from "./0024_message_status_history.ts"
import idempotencyKeys from "./0025_idempotency_keys.ts"
import broadcastMessageEvents from "./0026_broadcast_message_events.ts"
import ledgerBalanceAfter from "./0027_ledger_balance_after.ts"
import consoleSessions from "./0028_console_sessions.ts"
import chunkClaimOwner from "./0029_chunk_claim_owner.ts"
import timerTrace from "./0030_timer_trace.ts"
import idempotencySealed from "./0033_idempotency_sealed.ts"
import opsSessions from "./0034_ops_sessions.ts"
import memberInvitations from "./0035_member_invitations.ts"
import sealedSigningKeys from "./0037_sealed_signing_keys.ts"
import historyLateSent from "./0038_history_late_sent.ts"
import waMessageHistory from "./0042_wa_message_history.ts"
import customerOptOut from "./0048_customer_opt_out.ts"
import optKeywords from "./0049_opt_keywords.ts"
import whatsappCampaigns from "./0050_whatsapp_campaigns.ts"

/**
 * Every migration, in order. Listed here rather than discovered on disk so that the set applied
 * is part of the code that was reviewed and does not depend on the working directory.
 */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_identity": identity,
  "0002_actor_runtime": actorRuntime,
  "0003_sign_in": signIn,
  "0004_bots_and_api_keys": botsAndApiKeys,
  "0005_secret_keys": secretKeys,
  "0006_change_feed": changeFeed,
  "0007_webhooks": webhooks,
  "0008_bot_applications": botApplications,
  "0009_templates": templates,
  "0010_messaging": messaging,
  "0011_auto_replies": autoReplies,
  "0012_contact_lists": contactLists,
  "0013_broadcasts": broadcasts,
  "0014_token_subjects_feed": tokenSubjectsFeed,
  "0015_poison_bytes": poisonBytes,
  "0016_broadcast_doubt": broadcastDoubt,
  "0017_whatsapp": whatsapp,
  "0018_customers_conversions": customersConversions,
  "0019_graphql_reads": graphqlReads,
  "0020_app_api": appApi,
  "0021_outbox_batches": outboxBatches,
  "0022_partner_email": partnerEmail,
  "0023_secret_rotation_personalisation": secretRotationPersonalisation,
  "0024_message_status_history": messageStatusHistory,
  "0025_idempotency_keys": idempotencyKeys,
  "0026_broadcast_message_events": broadcastMessageEvents,
  "0027_ledger_balance_after": ledgerBalanceAfter,
  "0028_console_sessions": consoleSessions,
  "0029_chunk_claim_owner": chunkClaimOwner,
  "0030_timer_trace": timerTrace,
  "0033_idempotency_sealed": idempotencySealed,
  "0034_ops_sessions": opsSessions,
  "0035_member_invitations": memberInvitations,
  "0037_sealed_signing_keys": sealedSigningKeys,
  "0038_history_late_sent": historyLateSent,
  "0042_wa_message_history": waMessageHistory,
  "0048_customer_opt_out": customerOptOut,
  "0049_opt_keywords": optKeywords,
  "0050_whatsapp_campaigns": whatsappCampaigns
}
