import type { InvitationRow, MemberRow } from "../../accounts/MembershipsRepo.ts"

/** A team member as the answers show them. */
export const presentMember = (m: MemberRow) => ({
  member_id: m.role === "owner" ? "" : m.memberId,
  // An invited person's id is theirs to give: the account learns it when they accept.
  user_id: m.status === "invited" ? "" : m.userId,
  email: m.email,
  role: m.role,
  assigned_bots: m.assignedBots,
  status: m.status,
  created_at: new Date(m.createdAt).toISOString()
})

/** POST /team's answer: an invited person shows nothing of themselves; a new user is shown whole. */
export const presentAdded = (member: MemberRow) =>
  member.status === "invited"
    ? { success: true as const, member_id: member.memberId, status: "invited" as const }
    : { success: true as const, member_id: member.memberId, status: "active" as const, member: presentMember(member), user_created: true as const }

/** A pending invitation as the invited person sees it. */
export const presentInvitation = (i: InvitationRow) => ({
  member_id: i.memberId,
  account_id: i.accountId,
  account_label: i.accountLabel,
  role: i.role,
  assigned_bots: i.assignedBots,
  invited_at: new Date(i.createdAt).toISOString()
})
