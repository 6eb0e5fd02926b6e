// The shapes of the answers the console reads (docs/console.md; the REST API's HttpApi
// declarations under src/http/rcs and src/http/app). Only the fields the console uses.

export type Role = "owner" | "operator" | "viewer"

export interface Session {
  readonly email: string
  readonly role: Role
  readonly member_id: string
  readonly account_id: string
  readonly account_label: string
  readonly assigned_bots: ReadonlyArray<string>
  readonly expires_at: string
}

export type SessionAnswer =
  | { readonly success: true; readonly signed_in: false }
  | { readonly success: true; readonly signed_in: true; readonly csrf_token: string; readonly session: Session }

export interface AccountChoice {
  readonly account_id: string
  readonly label: string
  readonly role: Role
}

export type SignInAnswer =
  | { readonly success: true; readonly status: "signed_in"; readonly session?: Session; readonly csrf_token?: string }
  | { readonly success: true; readonly status: "requires_2fa"; readonly message?: string }
  | { readonly success: true; readonly status: "need_account_pick"; readonly accounts: ReadonlyArray<AccountChoice> }

export const MESSAGE_STATUSES = ["queued", "unconfirmed", "sent", "delivered", "read", "failed"] as const
export type MessageStatus = (typeof MESSAGE_STATUSES)[number]

export interface Overview {
  readonly account: { readonly account_id: string; readonly label: string; readonly plan: string }
  /** null for members other than the owner: billing is the owner's. */
  readonly wallet: { readonly balance: number; readonly currency: string } | null
  readonly messages_today: { readonly since?: string; readonly total: number; readonly by_status: Readonly<Record<MessageStatus, number>> }
  readonly last_24_hours: ReadonlyArray<HourBucket>
}

export interface HourBucket {
  readonly hour: string
  readonly sent: number
  readonly failed: number
}

export const BROADCAST_STATUSES = ["scheduled", "queued", "running", "completed", "cancelled"] as const
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number]

/** The counters of a broadcast, as the live stream sends them (`event: broadcast_progress`). */
export interface BroadcastProgress {
  readonly broadcast_id: string
  readonly status: BroadcastStatus
  readonly total_count: number
  readonly sent_count: number
  readonly delivered_count: number
  readonly read_count: number
  readonly failed_count: number
  readonly cancelled_count: number
}

export interface Broadcast {
  readonly id: string
  readonly name: string
  readonly bot_id: string
  readonly template_id: string
  readonly contact_list_id: string
  readonly status: BroadcastStatus
  readonly scheduled_at: string | null
  readonly total_count: number
  readonly sent_count: number
  readonly delivered_count: number
  readonly read_count: number
  readonly failed_count: number
  readonly cancelled_count: number
  readonly created_at: string
  readonly started_at: string | null
  readonly completed_at: string | null
  readonly cancelled_at: string | null
  readonly variables: Readonly<Record<string, string>>
}

export const TARGET_STATUSES = ["pending", "unconfirmed", "sent", "delivered", "read", "failed", "cancelled"] as const
export type TargetStatus = (typeof TARGET_STATUSES)[number]

export interface Target {
  readonly target_no: number
  readonly phone: string
  readonly message_id: string
  readonly status: TargetStatus
  readonly failure_reason: string | null
  readonly sent_at: string | null
  readonly delivered_at: string | null
  readonly read_at: string | null
  readonly failed_at: string | null
}

export interface Page {
  readonly count: number
  readonly next_cursor?: string
}

export interface Bot {
  readonly bot_id: string
  readonly name: string
  readonly status: "pending" | "active" | "rejected" | "suspended"
  readonly can_broadcast: boolean
}

export interface RichCardLike {
  readonly title?: string
  readonly description?: string
  readonly suggestions?: ReadonlyArray<SuggestionLike>
}

export interface SuggestionLike {
  readonly text?: string
  readonly postback_data?: string
}

export interface Template {
  readonly template_id: string
  readonly bot_id: string
  readonly name: string
  readonly type: "text" | "rich_card" | "carousel"
  readonly status: "pending" | "approved" | "rejected"
  readonly text?: string
  readonly rich_card?: RichCardLike
  readonly carousel?: { readonly cards: ReadonlyArray<RichCardLike> }
  readonly suggestions: ReadonlyArray<SuggestionLike>
  readonly created_at: string
}

export interface ContactList {
  readonly list_id: string
  readonly name: string
  readonly contact_count: number
  readonly created_at: string
}

export interface Webhook {
  readonly webhook_id: string
  readonly url: string
  readonly active: boolean
  readonly events: ReadonlyArray<string>
  readonly bot_id: string | null
  readonly channel: "rcs" | "whatsapp"
  readonly created_at: string
}

export type Health = "healthy" | "degraded" | "failing" | "idle"

export interface WebhookStats {
  readonly webhook_id: string
  readonly attempts: number
  readonly succeeded: number
  readonly failed: number
  readonly success_rate: number | null
  readonly latency_ms: { readonly p50: number | null; readonly p95: number | null }
  readonly last_attempt_at: string | null
  readonly last_status_code: number | null
  readonly health: Health
}

export interface Attempt {
  readonly attempt_id: string
  readonly delivery_id: string
  readonly event_type: string
  readonly attempt: number
  readonly status_code: number
  readonly took_ms: number
  readonly response_snippet: string
  readonly sent_at: string
}

export interface DeadLetter {
  readonly delivery_id: string
  readonly webhook_id: string
  readonly event_type: string
  readonly url: string
  readonly reason: string
  readonly first_attempt_at: string
  readonly permanent_failure_at: string
}

export interface Member {
  readonly member_id: string
  readonly email: string
  readonly role: Role
  readonly assigned_bots: ReadonlyArray<string>
  /** invited: a person who already had a Herald user and has not accepted yet (no access). */
  readonly status: "active" | "invited"
  readonly created_at: string
}

/** The answer to adding a member: a new person is a member at once; a known one is invited (and nothing about them is said). */
export type AddMemberAnswer =
  | { readonly status: "active"; readonly member_id: string; readonly member: Member; readonly user_created: true }
  | { readonly status: "invited"; readonly member_id: string }

/** An invitation to another account's team, as the invited person sees it. */
export interface Invitation {
  readonly member_id: string
  readonly account_id: string
  readonly account_label: string
  readonly role: Exclude<Role, "owner">
  readonly assigned_bots: ReadonlyArray<string>
  readonly invited_at: string
}

export interface ApiKey {
  readonly key_id: string
  readonly name: string
  readonly prefix: string
  readonly last_four: string
  readonly scopes: ReadonlyArray<string>
  readonly created_at: string
  readonly created_by: string
  readonly last_used_at: string | null
  readonly expires_at: string | null
  readonly revoked: boolean
}

export interface DeveloperWebhook {
  readonly webhook_id: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly created_at: string
}

export interface RotatedSecret {
  readonly webhook_id: string
  readonly secret: string
  readonly previous_secret_expires_at: string
}

export interface OpsSession {
  /** A node without HERALD_OPS_TOKEN answers 404; false here means the same. */
  readonly enabled?: boolean
  readonly signed_in: boolean
  readonly csrf_token?: string
}

export interface OpsCluster {
  readonly partitions_per_kind: number
  readonly nodes: ReadonlyArray<{
    readonly node_id: string
    readonly role: string
    readonly started_at: string
    readonly host?: string
    readonly pid?: number
    readonly version?: string
  }>
  readonly kinds: ReadonlyArray<{
    readonly kind: string
    readonly partitions: ReadonlyArray<{ readonly partition: number; readonly owner: string | null; readonly epoch: number; readonly since?: string | null }>
    readonly backlog: { readonly pending: number; readonly ack_pending: number; readonly redelivered: number }
  }>
}

export interface PoisonItem {
  readonly poison_id: string
  readonly kind: string
  readonly partition: number
  readonly actor_key: string
  readonly error: string
  readonly attempts: number
  readonly parked_at: string
}
