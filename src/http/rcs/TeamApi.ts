import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Email } from "../../domain/identity.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"

const MemberRole = Schema.Literal("operator", "viewer")
const Bots = Schema.Array(Schema.String.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(1000))

const Member = Schema.Struct({
  member_id: Schema.String.annotations({ description: "The membership's id." }),
  user_id: Schema.String.annotations({ description: "The person's id (one person may be a member of several accounts); empty while they are invited." }),
  email: Schema.String.annotations({ description: "The person's e-mail, lower-case." }),
  role: Schema.Literal("owner", "operator", "viewer").annotations({ description: "owner: everything; operator: also writes; viewer: reads." }),
  assigned_bots: Schema.Array(Schema.String).annotations({ description: "The bots the member may act on: [\"*\"] for every bot (those made later too), or bot ids." }),
  status: Schema.Literal("active", "invited").annotations({
    description: "active: the member signs in to the account and acts in it; invited: a person who already had a Herald user and has not " +
      "accepted yet: no access, and the account is not among their sign-in's choices."
  }),
  created_at: Schema.String.annotations({ description: "When the member was added or invited (ISO 8601, UTC)." })
}).annotations({ description: "A member of the account's team." })

const Invitation = {
  member_id: Schema.String.annotations({ description: "The invitation's id: the membership's, which it stays once accepted." }),
  account_id: Schema.String.annotations({ description: "The account that invites you." }),
  account_label: Schema.String.annotations({ description: "That account's name." }),
  role: MemberRole.annotations({ description: "The role you would have there: operator (reads and writes) or viewer (reads)." }),
  assigned_bots: Schema.Array(Schema.String).annotations({ description: "The bots of that account you would act on: [\"*\"] for every bot, or bot ids." }),
  invited_at: Schema.String.annotations({ description: "When you were invited (ISO 8601, UTC)." })
}

const MEMBER = {
  member_id: "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
  user_id: "7e6d5c4b-3a29-4187-9f6e-5d4c3b2a1f0e",
  email: "ravi@example.com",
  role: "operator",
  assigned_bots: ["1b2c3d4e-5f60-4718-89ab-cdef01234567"],
  status: "active",
  created_at: "2026-03-01T09:30:00.000Z"
}
const INVITED = { ...MEMBER, member_id: "2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f60", user_id: "", email: "meera@example.com", role: "viewer", status: "invited" }
const INVITATION = {
  member_id: INVITED.member_id,
  account_id: "3e4f5a6b-7c8d-4e9f-8a1b-2c3d4e5f6071",
  account_label: "Acme Retail",
  role: "viewer",
  assigned_bots: ["*"],
  invited_at: "2026-03-02T11:00:00.000Z"
}
const MemberPath = Schema.Struct({ member_id: Schema.String.annotations({ description: "The member's id (member_id)." }) })
const InvitationPath = Schema.Struct({ member_id: Schema.String.annotations({ description: "The invitation's id (member_id in GET /team/invitations)." }) })

/** The account's team (owner, signed in); invitations (the invited person, signed in as themselves). */
export class TeamApi extends HttpApiGroup.make("team")
  .add(
    HttpApiEndpoint.get("list", "/")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), members: Schema.Array(Member).annotations({ description: "Every member, the owner and invited people included." }) }))
      .annotateContext(documented({
        summary: "List the team",
        description: "Every member of the account with their role, bots and status (`active`, or `invited` until the person accepts). " +
          "Any signed-in member (a user token).",
        response: {
          success: true,
          members: [
            { ...MEMBER, member_id: "9f8e7d6c-5b4a-4392-8a1b-0c9d8e7f6a5b", user_id: "4b3a2c1d-0e9f-4a8b-9c7d-6e5f4a3b2c1d", email: "asha@example.com", role: "owner", assigned_bots: ["*"] },
            MEMBER,
            INVITED
          ]
        },
        returns: "The members."
      }))
  )
  .add(
    HttpApiEndpoint.post("add", "/")
      .setPayload(Schema.Struct({
        email: Email.pipe(describe("The person's e-mail: a new person gets a Herald user with `password`; a person who already has one is invited.")),
        role: MemberRole.annotations({ description: "operator (reads and writes) or viewer (reads)." }),
        assigned_bots: Bots.pipe(describe("[\"*\"] for every bot, or ids of the account's bots.")),
        password: Schema.optional(Schema.Redacted(Schema.String.pipe(Schema.maxLength(1024))).pipe(describe("The new user's password, 8 to 256 characters: required when the e-mail has no Herald user yet, ignored otherwise.")))
      }))
      .addSuccess(Schema.Union(
        Schema.Struct({
          success: Schema.Literal(true),
          member_id: Schema.String.annotations({ description: "The new member's id." }),
          status: Schema.Literal("active").annotations({ description: "A new person: a member at once, signing in with the password given." }),
          member: Member,
          user_created: Schema.Literal(true).annotations({ description: "A new Herald user was created for the e-mail." })
        }),
        Schema.Struct({
          success: Schema.Literal(true),
          member_id: Schema.String.annotations({ description: "The invitation's id (the membership's once accepted)." }),
          status: Schema.Literal("invited").annotations({
            description: "The e-mail already belongs to a person: they are invited, and become a member only when they accept."
          })
        })
      ))
      .addError(ForbiddenResponse)
      .addError(ConflictResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Add a team member",
        description: "The owner, signed in, adds an operator or a viewer with the bots they may act on. An e-mail with no Herald user yet " +
          "gets one with `password`, and the member is `active` at once. An e-mail that already belongs to a person is `invited`: the " +
          "answer says nothing about them, their password and sign-in stay as they were, and the membership gives no access until they " +
          "accept it, signed in as themselves (`POST /api/v1/rcs/team/invitations/{member_id}/accept`). A person already a member or " +
          "invited is 409 `conflict` (`key: \"email\"`); unknown bot ids are 400.",
        request: { email: "ravi@example.com", role: "operator", assigned_bots: ["1b2c3d4e-5f60-4718-89ab-cdef01234567"], password: "a passphrase for ravi" },
        responses: {
          added: { summary: "A new person: added", value: { success: true, member_id: MEMBER.member_id, status: "active", member: MEMBER, user_created: true } },
          invited: { summary: "A person who already has a Herald user: invited", value: { success: true, member_id: INVITED.member_id, status: "invited" } }
        },
        returns: "The new member, or the invitation."
      }))
  )
  .add(
    HttpApiEndpoint.get("invitations", "/invitations")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        invitations: Schema.Array(Schema.Struct(Invitation).annotations({ description: "An invitation to another account's team, waiting for your answer." }))
          .annotations({ description: "Your pending invitations, oldest first." })
      }))
      .annotateContext(documented({
        summary: "List your invitations",
        description: "The invitations to other accounts' teams waiting for the signed-in person's answer, whichever account their " +
          "token is for. Any signed-in person (a user token; not an API key).",
        response: { success: true, invitations: [INVITATION] },
        returns: "Your pending invitations."
      }))
  )
  .add(
    HttpApiEndpoint.post("acceptInvitation", "/invitations/:member_id/accept")
      .setPath(InvitationPath)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        status: Schema.Literal("active").annotations({ description: "You are now a member of the account." }),
        ...Invitation
      }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Accept an invitation",
        description: "The invited person, signed in as themselves, joins the account with the invitation's role and bots. The account is " +
          "then among their sign-in's choices (sign in again and pick it). Another person's invitation, an answered one or an unknown " +
          "id is 404 `not_found`.",
        response: { success: true, status: "active", ...INVITATION },
        returns: "The membership, now active."
      }))
  )
  .add(
    HttpApiEndpoint.post("declineInvitation", "/invitations/:member_id/decline")
      .setPath(InvitationPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Decline an invitation",
        description: "The invited person, signed in as themselves, refuses it: the invitation is deleted and gives no access (the " +
          "account's owner may invite them again). Another person's invitation, an answered one or an unknown id is 404 `not_found`.",
        response: { success: true },
        returns: "Declined."
      }))
  )
  .add(
    HttpApiEndpoint.patch("update", "/:member_id")
      .setPath(MemberPath)
      .setPayload(Schema.Struct({
        role: Schema.optional(MemberRole.annotations({ description: "operator or viewer." })),
        assigned_bots: Schema.optional(Bots.pipe(describe("[\"*\"], or the bot ids the member may act on from now on.")))
      }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), member: Member }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Change a member's role or bots",
        description: "Only the fields given change (an invited person's too: they accept what the invitation then says). The member's " +
          "existing tokens get the new role and bots on their next request. The owner, signed in.",
        request: { role: "viewer", assigned_bots: ["*"] },
        response: { success: true, member: { ...MEMBER, role: "viewer", assigned_bots: ["*"] } },
        returns: "The member as they are now."
      }))
  )
  .add(
    HttpApiEndpoint.del("remove", "/:member_id")
      .setPath(MemberPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Remove a team member",
        description: "The member's tokens stop working for this account at once; the person's Herald user stays. An invited person's " +
          "invitation is withdrawn. The owner, signed in.",
        response: { success: true },
        returns: "Removed."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/team")
  .annotate(
    OpenApi.Description,
    "The account's team: operators and viewers, each with the bots they may act on; managed by the owner, signed in. A person who " +
      "already has a Herald user is invited and answers the invitation signed in as themselves."
  ) {}
