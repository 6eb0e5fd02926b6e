import type { LoginOutcome, SignedIn } from "../../security/SignIn.ts"

/** A token and whom it names, as /api/v1/rcs/auth answers it. */
export const presentToken = (signedIn: SignedIn) => ({
  success: true as const,
  token: signedIn.token,
  role: signedIn.role,
  user: {
    user_id: signedIn.userId,
    email: signedIn.email,
    account_label: signedIn.accountLabel,
    member_id: signedIn.memberId,
    assigned_bots: signedIn.assignedBots
  }
})

/** POST /api/v1/rcs/auth/login's answer: a token, a second factor to give, or the accounts to pick from. */
export const presentLogin = (outcome: LoginOutcome) => {
  switch (outcome._tag) {
    case "SignedIn":
      return presentToken(outcome)
    case "SecondFactorRequired":
      return { success: true as const, requires_2fa: true as const, message: outcome.message }
    case "AccountPick":
      return {
        success: true as const,
        need_account_pick: true as const,
        session_token: outcome.sessionToken,
        accounts: outcome.accounts.map((a) => ({
          account_id: a.accountId,
          role: a.role,
          label: a.label,
          ...(a.memberId === undefined ? {} : { member_id: a.memberId })
        }))
      }
  }
}

export const presentTwoFactorSetup = (setup: { readonly secret: string; readonly otpauthUri: string }) => ({
  success: true as const,
  secret: setup.secret,
  otpauth_uri: setup.otpauthUri
})

export const presentRecoveryCodes = (enabled: { readonly recoveryCodes: ReadonlyArray<string> }) => ({
  success: true as const,
  recovery_codes: enabled.recoveryCodes
})

export const presentDone = () => ({ success: true as const })
