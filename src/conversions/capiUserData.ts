/**
 * Normalisation and SHA-256 hashing of Meta Conversions API `user_data` values.
 *
 * Meta matches on the hash alone, so a value normalised even slightly differently from how Meta's
 * own tooling does it never matches and fails silently. The rules therefore follow the official
 * Business SDK (facebook-nodejs-business-sdk, `src/objects/serverside/utils.js`,
 * `ServerSideUtils.normalizeAndHash`), with the Python and PHP SDKs as cross-checks, rather than
 * anything we would design ourselves. Deliberate departures are marked "Departure from the SDK".
 *
 * Customer Information Parameters:
 * https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/customer-information-parameters
 */
import { sha256 } from "../crypto/secrets.ts"

/** Lowercase hex SHA-256, the only digest form Meta accepts for hashed `user_data` keys. */
export { sha256 as sha256Hex }

/** The hashed `user_data` keys. Unhashed ones (client_ip_address, fbc, fbp, ...) never come here. */
export type UserDataField = "em" | "ph" | "fn" | "ln" | "ct" | "st" | "zp" | "country" | "ge" | "db" | "external_id"

const SHA256_HEX = /^[a-f0-9]{64}$/

// Copied from the SDK (and Meta's capi-param-builder emailUtil.js) character for character, so we
// accept exactly what it accepts. That includes its `(:?` typo (meant `(?:`), which also lets a
// ':' stand before a dot in the local part; fixing it would make us stricter than Meta.
const EMAIL =
  /^[\w!#\$%&'\*\+\/\=\?\^`\{\|\}~\-]+(:?\.[\w!#\$%&'\*\+\/\=\?\^`\{\|\}~\-]+)*@(?:[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?$/i

// The SDK strips only these from cities and states: letters outside a-z (é, ß, ...) are kept and
// hashed as UTF-8, which is what Meta's docs ask for.
const LOCATION_NOISE = /[0-9\s().-]/g

// ISO 3166-1 alpha-2, all 249 assigned codes: the SDK rejects anything else (iso-3166-1 package).
const COUNTRIES: ReadonlySet<string> = new Set(
  ("ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bl bm bn bo bq br bs bt bv bw by bz " +
    "ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg eh er es et fi fj fk fm fo fr " +
    "ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo " +
    "jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mf mg mh mk ml mm mn mo mp mq mr " +
    "ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro " +
    "rs ru rw sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st sv sx sy sz tc td tf tg th tj tk tl tm tn to tr tt tv " +
    "tw tz ua ug um us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw").split(" ")
)

const email = (value: string): string | undefined => (EMAIL.test(value) ? value : undefined)

const phone = (value: string): string | undefined => {
  // Departure from the SDK: it strips only - @ # < > ' " , ; space ( ) + and a-z, so "650.555.1212"
  // would keep its dots. Meta's docs say to remove all symbols; for every input made of digits and
  // the SDK's own strip set the result is identical.
  const digits = value.replace(/\D/g, "")
  // The SDK drops at most two leading zeros (an international "00" or a national trunk "0"), and only
  // when what remains looks like a number with a country code: NANP ("1" + 10 digits) or >= 7 digits.
  const stripped = digits.replace(/^0{1,2}/, "")
  const international = stripped !== "" && !stripped.startsWith("0") &&
    (stripped.startsWith("1") ? stripped.length === 11 : stripped.length >= 7)
  const result = international ? stripped : digits
  // Departure from the SDK: where it would still hash a number starting with 0 (three or more leading
  // zeros, or "00" before something that is not a full number), we refuse. No country calling code
  // starts with 0, so such a hash can never match anyone.
  if (result.startsWith("0")) return undefined
  // E.164 caps numbers at 15 digits. The SDK's floor is 7; its ceiling was 15 and is 16 in current
  // releases, which only admits strings no real number has.
  return result.length >= 7 && result.length <= 15 ? result : undefined
}

const gender = (value: string): string | undefined => {
  const letters = value.replace(/[^a-z]/g, "")
  if (letters === "f" || letters === "female") return "f"
  if (letters === "m" || letters === "male") return "m"
  return undefined
}

// ZIP+4 and similar suffixes are cut at the dash so "94035-1234" hashes like "94035".
const zip = (value: string): string | undefined => {
  const head = value.replace(/\s/g, "").split("-", 1)[0] ?? ""
  return head.length >= 2 ? head : undefined
}

const location = (value: string): string => value.replace(LOCATION_NOISE, "")

const country = (value: string): string | undefined => (COUNTRIES.has(value) ? value : undefined)

// fn, ln, db and external_id get no field-specific treatment in the SDK: trim and lowercase only.
// In particular db is not reformatted; callers must already supply YYYYMMDD.
const asIs = (value: string): string => value

// Each normaliser receives the trimmed, lowercased value, as in the SDK.
const NORMALIZERS: Readonly<Record<UserDataField, (value: string) => string | undefined>> = {
  em: email,
  ph: phone,
  fn: asIs,
  ln: asIs,
  ct: location,
  st: location,
  zp: zip,
  country,
  ge: gender,
  db: asIs,
  external_id: asIs
}

const prepare = (raw: string): string => raw.trim().toLowerCase()

/** The e-mail as Meta hashes it (trimmed, lowercase), or undefined when the SDK would refuse it. */
export const normalizeEmail = (raw: string): string | undefined => email(prepare(raw))

/** Digits with country code and no leading zeros, or undefined unless that gives 7 to 15 digits. */
export const normalizePhone = (raw: string): string | undefined => phone(prepare(raw))

/**
 * The value to send under `user_data[field]`: its SHA-256 after Meta's normalisation, the value
 * itself (lowercased) when it already is a SHA-256 hex digest, or undefined when it would not
 * normalise (the SDK throws or drops it; we let the caller omit the key instead).
 *
 * external_id: Meta recommends hashing it, but the SDKs send it raw. If the same ID also reaches
 * Meta through the Pixel or another integration, it must be hashed the same way there.
 */
export const hashUserField = (field: UserDataField, raw: string): string | undefined => {
  const value = prepare(raw)
  if (value === "") return undefined
  // Lets callers hand over values hashed upstream without double hashing them.
  if (SHA256_HEX.test(value)) return value
  const normalized = NORMALIZERS[field](value)
  // Departure from the SDK: it would hash "" (say a city given as "123"); that hash matches nobody.
  return normalized === undefined || normalized === "" ? undefined : sha256(normalized)
}
