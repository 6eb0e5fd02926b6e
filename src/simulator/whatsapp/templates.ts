import type { PricingCategory } from "./webhooks.ts"

/**
 * Templates submitted through the simulator: enough to answer creation and deletion and to price
 * a template send by its category. Sends name a template but not its WABA, so pricing looks the
 * template up by name and language alone (the last one created wins).
 */

export interface TemplateRecord {
  readonly id: number
  readonly wabaId: string
  readonly name: string
  readonly language: string
  readonly category: string
}

const key = (...parts: ReadonlyArray<string>) => parts.join("\u0000")

const pricingOf = (category: string): PricingCategory => {
  switch (category.toUpperCase()) {
    case "MARKETING":
      return "marketing"
    case "AUTHENTICATION":
      return "authentication"
    default:
      return "utility"
  }
}

export class TemplateRegistry {
  private readonly templates = new Map<string, TemplateRecord>()
  private readonly pricing = new Map<string, PricingCategory>()
  // Meta's template ids are 15–16 digit numbers; kept under 2^53 so they survive as JSON numbers.
  private nextId = 1e15 + Math.floor(Math.random() * 1e15)

  get size(): number {
    return this.templates.size
  }

  /** Records a submitted template; resubmitting the same name and language replaces it. */
  create(wabaId: string, name: string, language: string, category: string): TemplateRecord {
    const record = { id: this.nextId++, wabaId, name, language, category }
    this.templates.set(key(wabaId, name, language), record)
    this.pricing.set(key(name, language), pricingOf(category))
    return record
  }

  /** Still the template of its name and language (not deleted or resubmitted since). */
  isCurrent(record: TemplateRecord): boolean {
    return this.templates.get(key(record.wabaId, record.name, record.language)) === record
  }

  /** Deletes the WABA's templates of that name (every language), or the one with `hsmId`; how many. */
  delete(wabaId: string, name: string, hsmId?: string): number {
    let deleted = 0
    for (const [k, record] of this.templates) {
      if (record.wabaId !== wabaId || record.name !== name) continue
      if (hsmId !== undefined && String(record.id) !== hsmId) continue
      this.templates.delete(k)
      deleted++
    }
    return deleted
  }

  /** How a send of this template is billed: its category, utility when the simulator never saw it. */
  categoryOf(name: string, language: string): PricingCategory {
    return this.pricing.get(key(name, language)) ?? "utility"
  }
}

/** Names containing `reject` are rejected, anything else approved (design, "Templates"). */
export const reviewOf = (name: string): { readonly event: "APPROVED" | "REJECTED"; readonly reason: string } =>
  name.toLowerCase().includes("reject") ? { event: "REJECTED", reason: "INCORRECT_CATEGORY" } : { event: "APPROVED", reason: "NONE" }
