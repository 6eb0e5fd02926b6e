// Team and API keys: the signed-in person's invitations to other accounts (accepted or declined by
// them), the members (added, invited and removed by the owner) and the account's API keys (made and
// revoked by the owner; a new key is shown once).
import { useEffect, useRef, useState } from "preact/hooks"
import { api, ApiError, errorMessage, idempotencyKey } from "../api.ts"
import {
  Badge,
  Field,
  FormToggle,
  Loading,
  LoadError,
  type Result,
  ResultRegion,
  RoleNote,
  RowAction,
  SecretPanel,
  TableWrap,
  useConfirm,
  useRowActions
} from "../components.tsx"
import { Time } from "../format.tsx"
import { useLoad, useTitle } from "../hooks.ts"
import { denyOwner, roleLabel, useSession } from "../session.tsx"
import type { AddMemberAnswer, ApiKey, Bot, Invitation, Member } from "../types.ts"

export const TeamPage = () => {
  useTitle("Team and API keys")
  const { session } = useSession()
  const deny = denyOwner(session.role)
  const bots = useLoad((signal) => api.get<{ readonly bots: ReadonlyArray<Bot> }>("/rcs/bots", signal), [])
  const botName = new Map((bots.data?.bots ?? []).map((b) => [b.bot_id, b.name]))
  return (
    <>
      <h1>Team and API keys</h1>
      <RoleNote text={deny === undefined ? undefined : "Only the account's owner can change the team and the API keys."} />
      <Invitations />
      <Members deny={deny} self={session.member_id} bots={bots.data?.bots ?? []} botName={botName} />
      <ApiKeys deny={deny} />
    </>
  )
}

// The signed-in person's own invitations: shown only when there are some.

const Invitations = () => {
  const invitations = useLoad((signal) => api.get<{ readonly invitations: ReadonlyArray<Invitation> }>("/rcs/team/invitations", signal), [])
  const { result, busy, run } = useRowActions()

  const answer = (invitation: Invitation, verb: "accept" | "decline"): Promise<void> =>
    run(invitation.member_id, async () => {
      await api.post(`/rcs/team/invitations/${encodeURIComponent(invitation.member_id)}/${verb}`)
      invitations.setData((data) => data === undefined ? data : { invitations: data.invitations.filter((i) => i.member_id !== invitation.member_id) })
      return verb === "accept"
        ? `You joined ${invitation.account_label} as ${roleLabel(invitation.role).toLowerCase()}. Sign out and sign in again to choose it.`
        : `You declined the invitation to ${invitation.account_label}.`
    })

  const pending = invitations.data?.invitations ?? []
  if (pending.length === 0 && result === null) return null
  return (
    <section aria-labelledby="invitations-title">
      <h2 id="invitations-title">Your invitations</h2>
      <ResultRegion result={result} />
      {pending.length > 0 && (
        <TableWrap label="Your invitations">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">Role</th>
                <th scope="col">Invited</th>
                <th scope="col"><span class="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {pending.map((i) => (
                <tr key={i.member_id} data-testid={`invitation-${i.member_id}`}>
                  <th scope="row">{i.account_label}</th>
                  <td>{roleLabel(i.role)}</td>
                  <td class="nowrap"><Time iso={i.invited_at} /></td>
                  <td class="nowrap">
                    <RowAction label="Accept" subject={i.account_label} busy={busy === i.member_id} onClick={() => void answer(i, "accept")} testId={`accept-${i.member_id}`} />{" "}
                    <RowAction label="Decline" subject={i.account_label} danger busy={busy === i.member_id} onClick={() => void answer(i, "decline")} testId={`decline-${i.member_id}`} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  )
}

// Members.

const Members = ({ deny, self, bots, botName }: {
  readonly deny: string | undefined
  readonly self: string
  readonly bots: ReadonlyArray<Bot>
  readonly botName: ReadonlyMap<string, string>
}) => {
  const team = useLoad((signal) => api.get<{ readonly members: ReadonlyArray<Member> }>("/rcs/team", signal), [])
  const [formOpen, setFormOpen] = useState(false)
  const { result, setResult, busy, run } = useRowActions()
  const [confirmDialog, confirm] = useConfirm()

  const remove = async (member: Member): Promise<void> => {
    const invited = member.status === "invited"
    const ok = await confirm(invited
      ? { title: `Withdraw the invitation to ${member.email}?`, body: <p>They can no longer accept it.</p>, confirmLabel: "Withdraw the invitation", danger: true }
      : {
        title: `Remove ${member.email}?`,
        body: <p>They can no longer sign in to this account, and their sessions and tokens for it stop working at once.</p>,
        confirmLabel: "Remove the member",
        danger: true
      })
    if (!ok) return
    await run(member.member_id, async () => {
      await api.del(`/rcs/team/${encodeURIComponent(member.member_id)}`)
      team.setData((data) => data === undefined ? data : { members: data.members.filter((m) => m.member_id !== member.member_id) })
      return invited ? `The invitation to ${member.email} was withdrawn.` : `${member.email} was removed from the team.`
    })
  }

  const added = (answer: AddMemberAnswer, email: string): void => {
    setFormOpen(false)
    if (answer.status === "invited") {
      // The answer says nothing about an invited person: the list, read again, shows the invitation.
      team.reload()
      setResult({ tone: "good", text: `${email} already has a Herald user and was invited: they become a member when they accept.` })
      return
    }
    const member = answer.member
    team.setData((data) => ({ members: [...(data?.members ?? []).filter((m) => m.member_id !== member.member_id), member] }))
    setResult({ tone: "good", text: `${member.email} was added as ${member.role}, with a new Herald user.` })
  }

  const botsText = (assigned: ReadonlyArray<string>): string =>
    assigned.includes("*") ? "All bots" : assigned.length === 0 ? "None" : assigned.map((id) => botName.get(id) ?? id).join(", ")

  return (
    <section aria-labelledby="team-title">
      <div class="section-head">
        <h2 id="team-title">Team</h2>
        <FormToggle open={formOpen} onToggle={() => setFormOpen((open) => !open)} controls="add-member" label="Add member" deny={deny} />
      </div>
      {confirmDialog}
      <ResultRegion result={result} />
      <div id="add-member">{formOpen && deny === undefined && <AddMemberForm bots={bots} onAdded={added} onCancel={() => setFormOpen(false)} />}</div>
      {team.data === undefined
        ? team.error !== undefined ? <LoadError error={team.error} retry={team.reload} /> : <Loading what="the team" />
        : (
          <TableWrap label="Team members">
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">E-mail</th>
                  <th scope="col">Role</th>
                  <th scope="col">Bots</th>
                  <th scope="col">Status</th>
                  <th scope="col">Added</th>
                  <th scope="col"><span class="sr-only">Action</span></th>
                </tr>
              </thead>
              <tbody>
                {team.data.members.map((m) => (
                  <tr key={m.member_id} data-testid={`member-${m.member_id}`}>
                    <th scope="row">
                      {m.email}
                      {m.member_id === self && <span class="muted"> (you)</span>}
                    </th>
                    <td>{roleLabel(m.role)}</td>
                    <td>{botsText(m.assigned_bots)}</td>
                    <td>{m.status === "invited" ? <Badge tone="info">Invited</Badge> : <Badge tone="good">Active</Badge>}</td>
                    <td class="nowrap"><Time iso={m.created_at} /></td>
                    <td>
                      {m.role !== "owner" && (
                        <RowAction
                          label={m.status === "invited" ? "Withdraw" : "Remove"}
                          subject={m.email}
                          danger
                          deny={deny}
                          busy={busy === m.member_id}
                          onClick={() => void remove(m)}
                          testId={`remove-${m.member_id}`}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
    </section>
  )
}

const AddMemberForm = ({ bots, onAdded, onCancel }: {
  readonly bots: ReadonlyArray<Bot>
  readonly onAdded: (answer: AddMemberAnswer, email: string) => void
  readonly onCancel: () => void
}) => {
  const [email, setEmail] = useState("")
  const [role, setRole] = useState<"operator" | "viewer">("operator")
  const [allBots, setAllBots] = useState(true)
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set())
  const [password, setPassword] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const emailRef = useRef<HTMLInputElement>(null)
  useEffect(() => emailRef.current?.focus(), [])

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    if (busy) return
    if (!allBots && chosen.size === 0) {
      setError("Choose at least one bot, or all bots.")
      return
    }
    setBusy(true)
    setError(null)
    try {
      const answer = await api.post<AddMemberAnswer>("/rcs/team", {
        email: email.trim(),
        role,
        assigned_bots: allBots ? ["*"] : [...chosen],
        ...(password !== "" ? { password } : {})
      })
      setPassword("")
      onAdded(answer, email.trim())
    } catch (cause) {
      setError(errorMessage(cause))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="form panel" onSubmit={(e) => void submit(e)} aria-labelledby="add-member-title">
      <h3 id="add-member-title">Add a member</h3>
      <div class="form-grid">
        <Field id="am-email" label="E-mail">
          <input id="am-email" ref={emailRef} type="email" required autoComplete="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </Field>
        <Field id="am-role" label="Role">
          <select id="am-role" value={role} onChange={(e) => setRole(e.currentTarget.value === "viewer" ? "viewer" : "operator")}>
            <option value="operator">Operator: reads and writes</option>
            <option value="viewer">Viewer: reads only</option>
          </select>
        </Field>
        <Field
          id="am-password"
          label="Password (for a new user)"
          hint="Needed only when the person has no Herald user yet: 8 to 256 characters. A person who has one is invited, and joins when they accept."
        >
          <input
            id="am-password"
            type="password"
            autoComplete="new-password"
            minLength={8}
            maxLength={256}
            value={password}
            aria-describedby="am-password-hint"
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
      </div>
      <fieldset class="fieldset">
        <legend>Bots they may act on</legend>
        <div class="radio">
          <input type="radio" id="am-all" name="am-bots" checked={allBots} onChange={() => setAllBots(true)} />
          <label for="am-all">All bots, those added later too</label>
        </div>
        <div class="radio">
          <input type="radio" id="am-some" name="am-bots" checked={!allBots} onChange={() => setAllBots(false)} />
          <label for="am-some">Only these bots</label>
        </div>
        {!allBots && (
          <div class="checks">
            {bots.length === 0 && <p class="muted">The account has no bots.</p>}
            {bots.map((b) => (
              <div class="check" key={b.bot_id}>
                <input
                  type="checkbox"
                  id={`am-bot-${b.bot_id}`}
                  checked={chosen.has(b.bot_id)}
                  onChange={(e) => {
                    const on = e.currentTarget.checked
                    setChosen((current) => {
                      const next = new Set(current)
                      if (on) next.add(b.bot_id)
                      else next.delete(b.bot_id)
                      return next
                    })
                  }}
                />
                <label for={`am-bot-${b.bot_id}`}>{b.name}</label>
              </div>
            ))}
          </div>
        )}
      </fieldset>
      <div aria-live="assertive" aria-atomic="true" class="result-region">
        {error !== null && <p class="notice notice-bad">{error}</p>}
      </div>
      <div class="form-actions">
        <button type="submit" class="button button-primary" disabled={busy} aria-busy={busy ? "true" : undefined}>
          {busy ? "Adding…" : "Add the member"}
        </button>
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

// API keys.

type KeysAnswer = { readonly keys: ReadonlyArray<ApiKey>; readonly available_scopes: ReadonlyArray<string> }
type NewKey = { readonly raw_key: string; readonly warning: string; readonly name: string }

const ApiKeys = ({ deny }: { readonly deny: string | undefined }) => {
  const keys = useLoad((signal) => api.get<KeysAnswer>("/rcs/api-keys", signal), [])
  const [formOpen, setFormOpen] = useState(false)
  const [newKey, setNewKey] = useState<NewKey | null>(null)
  const [result, setResult] = useState<Result | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [confirmDialog, confirm] = useConfirm()
  const forbidden = keys.error instanceof ApiError && keys.error.status === 403

  const revoke = async (key: ApiKey): Promise<void> => {
    const ok = await confirm({
      title: `Revoke the key “${key.name}”?`,
      body: <p>Programs using <code>{key.prefix}…{key.last_four}</code> stop working at once. A revoked key cannot be restored.</p>,
      confirmLabel: "Revoke the key",
      danger: true
    })
    if (!ok) return
    setBusy(key.key_id)
    try {
      await api.del(`/rcs/api-keys/${encodeURIComponent(key.key_id)}`)
      keys.setData((data) => data === undefined ? data : { ...data, keys: data.keys.map((k) => k.key_id === key.key_id ? { ...k, revoked: true } : k) })
      setResult({ tone: "good", text: `The key “${key.name}” is revoked.` })
    } catch (cause) {
      setResult({ tone: "bad", text: errorMessage(cause) })
    } finally {
      setBusy(null)
    }
  }

  return (
    <section aria-labelledby="keys-title">
      <div class="section-head">
        <h2 id="keys-title">API keys</h2>
        <FormToggle open={formOpen} onToggle={() => setFormOpen((open) => !open)} controls="create-key" label="Create API key" deny={deny} />
      </div>
      {confirmDialog}
      <ResultRegion result={result} />
      {newKey !== null && (
        <SecretPanel
          title={`Your new API key “${newKey.name}”`}
          value={newKey.raw_key}
          warning={newKey.warning}
          testId="new-api-key"
          onDismiss={() => setNewKey(null)}
        />
      )}
      <div id="create-key">
        {formOpen && deny === undefined && keys.data !== undefined && (
          <CreateKeyForm
            scopes={keys.data.available_scopes}
            onCancel={() => setFormOpen(false)}
            onCreated={(answer) => {
              keys.setData((data) => data === undefined ? data : { ...data, keys: [answer.key, ...data.keys.filter((k) => k.key_id !== answer.key.key_id)] })
              setFormOpen(false)
              setNewKey({ raw_key: answer.raw_key, warning: answer.warning, name: answer.key.name })
            }}
          />
        )}
      </div>
      {forbidden
        ? <p class="notice notice-info">The API keys are shown to the account's owner only.</p>
        : keys.data === undefined
        ? keys.error !== undefined ? <LoadError error={keys.error} retry={keys.reload} /> : <Loading what="API keys" />
        : keys.data.keys.length === 0
        ? <p class="empty">No API keys yet.</p>
        : (
          <TableWrap label="API keys">
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">State</th>
                  <th scope="col"><span class="sr-only">Action</span></th>
                </tr>
              </thead>
              <tbody>
                {keys.data.keys.map((k) => (
                  <tr key={k.key_id} data-testid={`api-key-${k.key_id}`} class={k.revoked ? "row-revoked" : undefined}>
                    <th scope="row">{k.name}</th>
                    <td class="nowrap"><code>{k.prefix}…{k.last_four}</code></td>
                    <td class="cell-scopes">{k.scopes.join(", ")}</td>
                    <td class="nowrap"><Time iso={k.created_at} /> <span class="muted block">by {k.created_by}</span></td>
                    <td class="nowrap"><Time iso={k.last_used_at} empty="Never" /></td>
                    <td class="nowrap"><Time iso={k.expires_at} empty="Never" /></td>
                    <td>{k.revoked ? <span class="badge badge-neutral">Revoked</span> : <span class="badge badge-good">Active</span>}</td>
                    <td>
                      {!k.revoked && (
                        <RowAction
                          label="Revoke"
                          subject={k.name}
                          danger
                          deny={deny}
                          busy={busy === k.key_id}
                          onClick={() => void revoke(k)}
                          testId={`revoke-${k.key_id}`}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
    </section>
  )
}

type CreatedKey = { readonly raw_key: string; readonly warning: string; readonly key: ApiKey }

/** yyyy-mm-dd of tomorrow, the earliest expiry the date field offers. */
const tomorrow = (): string => {
  const d = new Date()
  d.setDate(d.getDate() + 1)
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`
}

const CreateKeyForm = ({ scopes, onCreated, onCancel }: {
  readonly scopes: ReadonlyArray<string>
  readonly onCreated: (answer: CreatedKey) => void
  readonly onCancel: () => void
}) => {
  const [name, setName] = useState("")
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set())
  const [expiry, setExpiry] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const nameRef = useRef<HTMLInputElement>(null)
  useEffect(() => nameRef.current?.focus(), [])

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    if (busy) return
    if (chosen.size === 0) {
      setError("Choose at least one scope.")
      return
    }
    let expiresAt: string | undefined
    if (expiry !== "") {
      // The end of the chosen day, in the browser's time zone.
      const date = new Date(`${expiry}T23:59:59`)
      if (Number.isNaN(date.getTime())) {
        setError("The expiry date is not a date.")
        return
      }
      expiresAt = date.toISOString()
    }
    setBusy(true)
    setError(null)
    try {
      const answer = await api.post<CreatedKey>(
        "/rcs/api-keys",
        { name: name.trim(), scopes: scopes.filter((s) => chosen.has(s)), ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}) },
        { "idempotency-key": idempotencyKey() }
      )
      onCreated(answer)
    } catch (cause) {
      setError(errorMessage(cause))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="form panel" onSubmit={(e) => void submit(e)} aria-labelledby="create-key-title">
      <h3 id="create-key-title">Create an API key</h3>
      <div class="form-grid">
        <Field id="ck-name" label="Name">
          <input id="ck-name" ref={nameRef} type="text" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="ck-expiry" label="Expires on (optional)" hint="The key stops working at the end of that day. Empty: it never expires.">
          <input id="ck-expiry" type="date" min={tomorrow()} value={expiry} aria-describedby="ck-expiry-hint" onInput={(e) => setExpiry(e.currentTarget.value)} />
        </Field>
      </div>
      <fieldset class="fieldset">
        <legend>Scopes</legend>
        <p class="hint">Keys only read in this release: a write scope grants its read half today (writes with a key are announced for a later release).</p>
        <div class="checks checks-grid">
          {scopes.map((scope) => (
            <div class="check" key={scope}>
              <input
                type="checkbox"
                id={`ck-scope-${scope}`}
                value={scope}
                checked={chosen.has(scope)}
                onChange={(e) => {
                  const on = e.currentTarget.checked
                  setChosen((current) => {
                    const next = new Set(current)
                    if (on) next.add(scope)
                    else next.delete(scope)
                    return next
                  })
                }}
              />
              <label for={`ck-scope-${scope}`}>
                <code>{scope}</code>
              </label>
            </div>
          ))}
        </div>
      </fieldset>
      <div aria-live="assertive" aria-atomic="true" class="result-region">
        {error !== null && <p class="notice notice-bad">{error}</p>}
      </div>
      <div class="form-actions">
        <button type="submit" class="button button-primary" disabled={busy} aria-busy={busy ? "true" : undefined}>
          {busy ? "Creating…" : "Create the key"}
        </button>
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}
