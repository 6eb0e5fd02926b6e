import { readdirSync, readFileSync } from "node:fs"

// CPU of groups of processes, from /proc (Linux), for benches that add up a whole deployment:
// Herald's nodes, Postgres, NATS. A process that is gone reads as 0.

/** Clock ticks per second of /proc's CPU counters (USER_HZ, 100 on Linux). */
const TICKS = 100

interface Stat {
  readonly comm: string
  readonly ppid: number
  /** utime + stime, seconds. */
  readonly own: number
  /** cutime + cstime: the CPU of its children that it has reaped, seconds. */
  readonly children: number
}

const statOf = (pid: number): Stat | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const close = stat.lastIndexOf(")")
    const comm = stat.slice(stat.indexOf("(") + 1, close)
    const fields = stat.slice(close + 2).split(" ")
    return {
      comm,
      ppid: Number(fields[1]),
      own: (Number(fields[11]) + Number(fields[12])) / TICKS,
      children: (Number(fields[13]) + Number(fields[14])) / TICKS
    }
  } catch {
    return undefined
  }
}

const allPids = () => readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number)

/**
 * CPU seconds used so far by every `postgres` process of the machine: each live one's own, plus
 * what the postmaster's exited children (backends whose connections closed) used, which it has
 * reaped. A delta of two readings is what Postgres spent in between, whoever it served: the bench
 * should be the machine's only client.
 */
export const postgresCpuSeconds = () => {
  const stats = new Map<number, Stat>()
  for (const pid of allPids()) {
    const s = statOf(pid)
    if (s?.comm === "postgres") stats.set(pid, s)
  }
  let total = 0
  for (const s of stats.values()) {
    total += s.own
    // The postmaster: a postgres process whose parent is not one.
    if (!stats.has(s.ppid)) total += s.children
  }
  return total
}

/** CPU seconds (user + system) the processes have used, summed. */
export const cpuOfPids = (pids: ReadonlyArray<number>) => pids.reduce((sum, pid) => sum + (statOf(pid)?.own ?? 0), 0)

/**
 * CPU of a changing set of processes (one database's Postgres backends: connections open and
 * close), sampled every `everyMs`: each process counts from its first reading (0 if it started
 * after `start`) to its last, so one that exits loses at most one interval.
 */
export const cpuTracker = (listPids: () => Promise<ReadonlyArray<number>>, everyMs = 1_000) => {
  const seen = new Map<number, { first: number; last: number }>()
  let started = false
  const sample = async () => {
    const pids = await listPids().catch(() => [] as ReadonlyArray<number>)
    for (const pid of pids) {
      const cpu = statOf(pid)?.own
      if (cpu === undefined) continue
      const known = seen.get(pid)
      if (known) known.last = cpu
      else seen.set(pid, { first: started ? 0 : cpu, last: cpu })
    }
  }
  let timer: ReturnType<typeof setInterval> | undefined
  return {
    start: async () => {
      await sample()
      started = true
      timer = setInterval(() => void sample(), everyMs)
    },
    /** Stops sampling; the CPU seconds used since `start`. */
    stop: async () => {
      clearInterval(timer)
      await sample()
      let total = 0
      for (const { first, last } of seen.values()) total += last - first
      return total
    }
  }
}
