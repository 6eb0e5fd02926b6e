import * as OTPAuth from "otpauth"

/** RFC 6238: SHA-1, 6 digits, 30 s steps, one step of drift either way. */
const PARAMS = { algorithm: "SHA1", digits: 6, period: 30 } as const

export const newTotpSecret = (): string => new OTPAuth.Secret({ size: 20 }).base32

export const totpUri = (secret: string, account: string): string =>
  new OTPAuth.TOTP({ ...PARAMS, issuer: "Herald", label: account, secret: OTPAuth.Secret.fromBase32(secret) }).toString()

/** Whether `code` is valid for `secret` at `timestamp` (ms), within ±1 step. */
export const verifyTotp = (secret: string, code: string, timestamp = Date.now()): boolean =>
  /^\d{6}$/.test(code) &&
  OTPAuth.TOTP.validate({ ...PARAMS, token: code, secret: OTPAuth.Secret.fromBase32(secret), timestamp, window: 1 }) !== null

export const generateTotp = (secret: string, timestamp = Date.now(), digits: number = PARAMS.digits): string =>
  OTPAuth.TOTP.generate({ ...PARAMS, digits, secret: OTPAuth.Secret.fromBase32(secret), timestamp })
