import type { FireRow, RuleRow } from "../../autoReplies/AutoRepliesRepo.ts"
import { replyOfRow } from "../../autoReplies/rules.ts"
import type { CursorPage } from "../../storage/ListCursors.ts"
import { presentListPage } from "./listPage.ts"

// How /api/v1/rcs/bots/{bot_id}/auto-replies presents the AutoReplies service's domain values
// (AutoRepliesApi.ts declares the shapes).

const presentRule = (row: RuleRow) => ({
  rule_id: row.ruleId,
  bot_id: row.botId,
  match: row.match,
  keyword: row.keyword,
  reply: replyOfRow(row),
  cooldown_seconds: row.cooldownSeconds,
  active: row.active,
  created_at: new Date(row.createdAt).toISOString()
})

const presentFire = (row: FireRow) => ({
  fire_id: row.fireId,
  rule_id: row.ruleId,
  bot_id: row.botId,
  recipient: row.recipient,
  inbound_text: row.inboundText,
  message_id: row.messageId,
  reply_status: row.replyStatus,
  fired_at: new Date(row.firedAt).toISOString()
})

export const presentRules = (rows: ReadonlyArray<RuleRow>) => ({ success: true as const, rules: rows.map(presentRule) })
export const presentOneRule = (row: RuleRow) => ({ success: true as const, rule: presentRule(row) })
export const presentFires = (page: CursorPage<FireRow>) => presentListPage("fires", page, presentFire)
