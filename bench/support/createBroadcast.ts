import { callJson } from "../../test/support/http.ts"

export interface BroadcastSetup {
  readonly token: string
  readonly botId: string
  readonly templateId: string
  readonly listId: string
}

/** Starts a broadcast of the setup's template to its whole list through the API; its id. */
export const createBroadcast = async (apiUrl: string, setup: BroadcastSetup): Promise<string> => {
  const created = await callJson(apiUrl, "POST", "/api/v1/rcs/broadcasts", setup.token, {
    name: "Bench",
    bot_id: setup.botId,
    template_id: setup.templateId,
    contact_list_id: setup.listId
  })
  if (created.status !== 200) throw new Error(`broadcast: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body.broadcast.id as string
}
