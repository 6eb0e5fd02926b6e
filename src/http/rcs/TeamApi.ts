import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Email } from "../../domain/identity.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"

const Member = Schema.Struct({
  member_id: Schema.String.annotations({ description: "The membership's id." }),
  user_id: Schema.String.annotations({ description: "The person's id (one person may be a member of several accounts)." }),
  email: Schema.String.annotations({ description: "The person's e-mail, lower-case." }),
  role: Schema.Literal("owner", "operator", "viewer").annotations({ description: "owner: everything; operator: also writes; viewer: reads." }),
  assigned_bots: Schema.Array(Schema.String).annotations({ description: "The bots the member may act on: [\"*\"] for every bot (those made later too), or bot ids." }),
  created_at: Schema.String.annotations({ description: "When the member was added (ISO 8601, UTC)." })
}).annotations({ description: "A member of the account's team." })

const MemberRole = Schema.Literal("operator", "viewer")
const Bots = Schema.Array(Schema.String.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(1000))

const MEMBER = {
  member_id: "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
  user_id: "7e6d5c4b-3a29-4187-9f6e-5d4c3b2a1f0e",
  email: "ravi@example.com",
  role: "operator",
  assigned_bots: ["1b2c3d4e-5f60-4718-89ab-cdef01234567"],
  created_at: "2026-03-01T09:30:00.000Z"
}
const MemberPath = Schema.Struct({ member_id: Schema.String.annotations({ description: "The member's id (member_id)." }) })

/** The account's team (owner, signed in). */
export class TeamApi extends HttpApiGroup.make("team")
  .add(
    HttpApiEndpoint.get("list", "/")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), members: Schema.Array(Member).annotations({ description: "Every member, the owner included." }) }))
      .annotateContext(documented({
        summary: "List the team",
        description: "Every member of the account with their role and bots. Any signed-in member (a user token).",
        response: {
          success: true,
          members: [
            { ...MEMBER, member_id: "9f8e7d6c-5b4a-4392-8a1b-0c9d8e7f6a5b", user_id: "4b3a2c1d-0e9f-4a8b-9c7d-6e5f4a3b2c1d", email: "asha@example.com", role: "owner", assigned_bots: ["*"] },
            MEMBER
          ]
        },
        returns: "The members."
      }))
  )
  .add(
    HttpApiEndpoint.post("add", "/")
      .setPayload(Schema.Struct({
        email: Email.pipe(describe("The person's e-mail: an existing Herald user joins with their own password; a new one is created.")),
        role: MemberRole.annotations({ description: "operator (reads and writes) or viewer (reads)." }),
        assigned_bots: Bots.pipe(describe("[\"*\"] for every bot, or ids of the account's bots.")),
        password: Schema.optional(Schema.Redacted(Schema.String.pipe(Schema.maxLength(1024))).pipe(describe("The new user's password, 8 to 256 characters: required when the e-mail has no Herald user yet, ignored otherwise.")))
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        member: Member,
        user_created: Schema.Boolean.annotations({ description: "Whether a new Herald user was created for the e-mail." })
      }))
      .addError(ForbiddenResponse)
      .addError(ConflictResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Add a team member",
        description: "The owner, signed in, adds an operator or a viewer with the bots they may act on. A person already a member is 409 " +
          "`conflict` (`key: \"email\"`); unknown bot ids are 400.",
        request: { email: "ravi@example.com", role: "operator", assigned_bots: ["1b2c3d4e-5f60-4718-89ab-cdef01234567"], password: "a passphrase for ravi" },
        response: { success: true, member: MEMBER, user_created: true },
        returns: "The new member."
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
        description: "Only the fields given change. The member's existing tokens get the new role and bots on their next request. The owner, signed in.",
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
        description: "The member's tokens stop working for this account at once; the person's Herald user stays. The owner, signed in.",
        response: { success: true },
        returns: "Removed."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/team")
  .annotate(OpenApi.Description, "The account's team: operators and viewers, each with the bots they may act on; managed by the owner, signed in.") {}
