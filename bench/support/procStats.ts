import { readFileSync } from "node:fs"

// What a bench reports of its processes and of the machine, read from /proc (Linux). A process
// that is gone reads as 0.

/** Clock ticks per second of /proc's CPU counters (USER_HZ, 100 on Linux). */
const TICKS = 100

/** A `kB` field of /proc/<pid>/status (VmRSS, VmHWM…). */
const statusKiB = (pid: number, field: string) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0)
  } catch {
    return 0
  }
}
const statusMb = (pid: number, field: string) => Math.round(statusKiB(pid, field) / 1024)

/** The most resident memory a process has had (VmHWM), MB. */
export const peakRssMb = (pid: number) => statusMb(pid, "VmHWM")

/** A process's resident memory now (VmRSS), MB. */
export const rssMb = (pid: number) => statusMb(pid, "VmRSS")

/** The same in KiB, for per-connection figures. */
export const rssKiB = (pid: number) => statusKiB(pid, "VmRSS")

/** CPU seconds (user + system) a process has used. */
export const cpuSeconds = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / TICKS
  } catch {
    return 0
  }
}

/** The machine's busy and total CPU seconds over all cores. */
export const machineCpu = () => {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(
    Number
  ) as [number, number, number, number, number, number, number, number]
  const busy = user + nice + system + irq + softirq + steal
  return { busy: busy / TICKS, total: (busy + idle + iowait) / TICKS }
}
