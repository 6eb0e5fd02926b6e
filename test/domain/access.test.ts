import { describe, expect, it } from "@effect/vitest"
import { API_KEY_ROUTES, botInScope, hasRole, scopeSatisfied } from "../../src/domain/access.ts"
import type { Principal } from "../../src/domain/signIn.ts"

const principal = (role: Principal["role"], bots: Array<string>): Principal => ({
  accountId: "a",
  accountLabel: "A",
  ownerUserId: "o",
  personUserId: "p",
  email: "p@example.com",
  memberId: "m",
  role,
  bots,
  credential: { kind: "user" }
})

describe("scopes", () => {
  it("a write scope grants its read half; messages:send has no read half and no substitute", () => {
    expect(scopeSatisfied(["broadcasts:write"], "broadcasts:read")).toBe(true)
    expect(scopeSatisfied(["broadcasts:read"], "broadcasts:write")).toBe(false)
    expect(scopeSatisfied(["templates:read"], "templates:write")).toBe(false)
    expect(scopeSatisfied(["contacts:write"], "contacts:read")).toBe(true)
    expect(scopeSatisfied(["broadcasts:write", "contacts:write"], "messages:send")).toBe(false)
    expect(scopeSatisfied(["messages:send"], "messages:send")).toBe(true)
    expect(scopeSatisfied([], "auto_replies:read")).toBe(false)
  })

  it("the allow-list is exactly the contract's: its seven reads and five personal-data reads", () => {
    expect([...API_KEY_ROUTES.keys()].sort()).toEqual([
      "/api/v1/rcs/auto-replies/:bot_id",
      "/api/v1/rcs/auto-replies/:bot_id/fires",
      "/api/v1/rcs/bots",
      "/api/v1/rcs/broadcasts",
      "/api/v1/rcs/broadcasts/:id",
      "/api/v1/rcs/broadcasts/:id/targets",
      "/api/v1/rcs/contact-lists",
      "/api/v1/rcs/recipients/:phone",
      "/api/v1/rcs/reports/messages",
      "/api/v1/rcs/reports/messages/:id/preview",
      "/api/v1/rcs/templates",
      "/api/v1/rcs/webhooks"
    ])
  })

  it("personal-data reads need contacts:read whatever they hang off", () => {
    for (const path of ["/api/v1/rcs/broadcasts/:id/targets", "/api/v1/rcs/auto-replies/:bot_id/fires", "/api/v1/rcs/reports/messages", "/api/v1/rcs/reports/messages/:id/preview", "/api/v1/rcs/recipients/:phone"]) {
      expect(API_KEY_ROUTES.get(path)).toBe("contacts:read")
    }
    expect(API_KEY_ROUTES.get("/api/v1/rcs/bots")).toBeNull()
    expect(API_KEY_ROUTES.has("/api/v1/rcs/bots/:bot_id")).toBe(false)
    expect(API_KEY_ROUTES.get("/api/v1/rcs/broadcasts/:id")).toBe("broadcasts:read")
    expect(API_KEY_ROUTES.has("/api/v1/rcs/api-keys")).toBe(false)
  })
})

describe("roles and bot scope", () => {
  it("ranks viewer < operator < owner", () => {
    expect(hasRole(principal("owner", ["*"]), "operator")).toBe(true)
    expect(hasRole(principal("operator", ["*"]), "operator")).toBe(true)
    expect(hasRole(principal("viewer", ["*"]), "operator")).toBe(false)
    expect(hasRole(principal("operator", ["*"]), "owner")).toBe(false)
  })

  it('["*"] covers every bot, including later ones; a list covers only its bots', () => {
    expect(botInScope(principal("viewer", ["*"]), "any-bot")).toBe(true)
    expect(botInScope(principal("viewer", ["b1", "b2"]), "b2")).toBe(true)
    expect(botInScope(principal("viewer", ["b1"]), "b2")).toBe(false)
  })
})
