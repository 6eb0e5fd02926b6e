import type { MessageContent } from "../../domain/content.ts"
import type { CursorPage } from "../../storage/ListCursors.ts"
import type { TemplateRow } from "../../templates/TemplatesRepo.ts"
import { presentListPage } from "./listPage.ts"

// How /api/v1/rcs/templates presents the Templates service's domain values (TemplatesApi.ts
// declares the shapes).

/** The content fields of a template as the API shows them: the same fields a POST takes. */
const contentFields = (content: MessageContent) => {
  switch (content.type) {
    case "text":
      return { text: content.text }
    case "rich_card":
      return { rich_card: content.rich_card }
    case "carousel":
      return { carousel: content.carousel }
  }
}

const present = (row: TemplateRow) => ({
  template_id: row.templateId,
  bot_id: row.botId,
  name: row.name,
  type: row.type,
  status: row.status,
  ...contentFields(row.content),
  suggestions: row.content.suggestions,
  warnings: row.warnings,
  created_at: new Date(row.createdAt).toISOString()
})

/** A created template: its main fields at the top level as well (the contract's create answer). */
export const presentCreated = (row: TemplateRow) => ({
  success: true as const,
  template_id: row.templateId,
  name: row.name,
  bot_id: row.botId,
  type: row.type,
  status: row.status,
  warnings: row.warnings,
  template: present(row)
})

export const presentTemplate = (row: TemplateRow) => ({ success: true as const, template: present(row) })
export const presentTemplates = (page: CursorPage<TemplateRow>) => presentListPage("templates", page, present)
