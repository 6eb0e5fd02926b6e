import { Effect, Option } from "effect"
import { Team } from "../../team/Team.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

export const TeamHttpLive = apiGroup(HeraldApi, "team", (handlers) =>
  Effect.map(Team, (team) =>
    handlers
      .handle("list", () => Effect.flatMap(CurrentPrincipal, team.list))
      .handle("add", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          team.add(p, { email: payload.email, role: payload.role, assignedBots: payload.assigned_bots, password: Option.fromNullable(payload.password) })))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => team.update(p, path.member_id, { role: payload.role, assignedBots: payload.assigned_bots })))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => team.remove(p, path.member_id)))
      .handle("invitations", () => Effect.flatMap(CurrentPrincipal, team.invitations))
      .handle("acceptInvitation", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => team.accept(p, path.member_id)))
      .handle("declineInvitation", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => team.decline(p, path.member_id)))))
