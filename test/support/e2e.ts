import { afterAll, beforeAll } from "@effect/vitest"
import Pg from "pg"
import { cleanup, type Isolation, makeIsolation } from "./isolation.ts"

/** Per-file isolation for black-box tests: created before the file's tests, removed after. */
export const useIsolation = (): Isolation => {
  const iso = makeIsolation()
  afterAll(() => cleanup(iso), 60_000)
  return iso
}

/** A plain pg client on the file's database, for assertions on what was written. */
export const useDb = (iso: Isolation) => {
  let client: Pg.Client | undefined
  beforeAll(() => undefined)
  afterAll(async () => {
    await client?.end()
  })
  return async <R extends Record<string, unknown>>(text: string, values: ReadonlyArray<unknown> = []): Promise<Array<R>> => {
    if (client === undefined) {
      client = new Pg.Client({ connectionString: iso.databaseUrl })
      await client.connect()
    }
    const result = await client.query(text, values as Array<unknown>)
    return result.rows as Array<R>
  }
}

export const eventually = async <A>(check: () => Promise<A>, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<A> => {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000)
  let last: unknown
  for (;;) {
    try {
      return await check()
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline) throw last
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100))
  }
}
