import type { Principal } from "../../src/domain/signIn.ts"

/** A signed-in person of `accountId` seeing every bot, for calling services directly. */
export const signedIn = (accountId: string, role: Principal["role"] = "owner"): Principal => ({
  accountId,
  accountLabel: "Test",
  ownerUserId: "u",
  personUserId: "u",
  email: "owner@example.com",
  memberId: "",
  role,
  bots: ["*"],
  credential: { kind: "user" }
})
