import { Effect, Option } from "effect"
import { Team } from "../../team/Team.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentAdded, presentInvitation, presentMember } from "./presentTeam.ts"

const done = { success: true as const }

export const TeamHttpLive = apiGroup(HeraldApi, "team", (handlers) =>
  Effect.map(Team, (team) =>
    handlers
      .handle("list", () =>
        CurrentPrincipal.pipe(Effect.flatMap(team.list), Effect.map((members) => ({ success: true as const, members: members.map(presentMember) }))))
      .handle("add", ({ payload }) =>
        CurrentPrincipal.pipe(
          Effect.flatMap((p) =>
            team.add(p, { email: payload.email, role: payload.role, assignedBots: payload.assigned_bots, password: Option.fromNullable(payload.password) })),
          Effect.map(presentAdded)
        ))
      .handle("update", ({ path, payload }) =>
        CurrentPrincipal.pipe(
          Effect.flatMap((p) => team.update(p, path.member_id, { role: payload.role, assignedBots: payload.assigned_bots })),
          Effect.map((member) => ({ success: true as const, member: presentMember(member) }))
        ))
      .handle("remove", ({ path }) => CurrentPrincipal.pipe(Effect.flatMap((p) => team.remove(p, path.member_id)), Effect.as(done)))
      .handle("invitations", () =>
        CurrentPrincipal.pipe(
          Effect.flatMap(team.invitations),
          Effect.map((rows) => ({ success: true as const, invitations: rows.map(presentInvitation) }))
        ))
      .handle("acceptInvitation", ({ path }) =>
        CurrentPrincipal.pipe(
          Effect.flatMap((p) => team.accept(p, path.member_id)),
          Effect.map((accepted) => ({ success: true as const, status: "active" as const, ...presentInvitation(accepted) }))
        ))
      .handle("declineInvitation", ({ path }) => CurrentPrincipal.pipe(Effect.flatMap((p) => team.decline(p, path.member_id)), Effect.as(done)))))
