import { Effect, Metric, type MetricKey, type MetricPair, type MetricState } from "effect"

/**
 * Renders Effect's metric registry in the Prometheus text exposition format (version 0.0.4).
 * Every Effect `Metric` a capability defines shows up here without registration.
 */
export const renderPrometheus: Effect.Effect<string> = Effect.map(Metric.snapshot, (pairs) => render(pairs))

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, "\\\"")

const labels = (key: MetricKey.MetricKey.Untyped, extra?: ReadonlyArray<readonly [string, string]>) => {
  const all = [...key.tags.map((t) => [t.key, t.value] as const), ...(extra ?? [])]
  return all.length === 0 ? "" : `{${all.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`
}

const num = (n: number | bigint) => (typeof n === "bigint" ? n.toString() : Number.isFinite(n) ? String(n) : n > 0 ? "+Inf" : n < 0 ? "-Inf" : "NaN")

const render = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const byName = new Map<string, Array<MetricPair.MetricPair.Untyped>>()
  for (const pair of pairs) {
    const list = byName.get(pair.metricKey.name) ?? []
    list.push(pair)
    byName.set(pair.metricKey.name, list)
  }
  const out: Array<string> = []
  for (const [name, list] of [...byName.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const first = list[0]!
    const state = first.metricState as MetricState.MetricState.Untyped & { _tag?: string }
    const type = typeOf(state)
    const help = first.metricKey.description._tag === "Some" ? first.metricKey.description.value : name
    out.push(`# HELP ${name} ${help.replace(/\n/g, " ")}`)
    out.push(`# TYPE ${name} ${type}`)
    for (const { metricKey, metricState } of list) out.push(...sample(name, metricKey, metricState))
  }
  return out.join("\n") + "\n"
}

const typeOf = (state: unknown): string => {
  const s = state as Record<string, unknown>
  if ("buckets" in s) return "histogram"
  if ("quantiles" in s) return "summary"
  if ("occurrences" in s) return "counter"
  if ("count" in s && !("sum" in s)) return "counter"
  return "gauge"
}

const sample = (name: string, key: MetricKey.MetricKey.Untyped, state: unknown): Array<string> => {
  const s = state as Record<string, any>
  if ("buckets" in s) {
    const lines: Array<string> = []
    let sawInf = false
    for (const [bound, count] of s.buckets as ReadonlyArray<readonly [number, number]>) {
      if (!Number.isFinite(bound)) sawInf = true
      lines.push(`${name}_bucket${labels(key, [["le", num(bound)]])} ${count}`)
    }
    if (!sawInf) lines.push(`${name}_bucket${labels(key, [["le", "+Inf"]])} ${s.count}`)
    lines.push(`${name}_sum${labels(key)} ${num(s.sum)}`, `${name}_count${labels(key)} ${s.count}`)
    return lines
  }
  if ("quantiles" in s) {
    const lines = (s.quantiles as ReadonlyArray<readonly [number, { _tag: string; value?: number }]>).map(
      ([q, v]) => `${name}${labels(key, [["quantile", String(q)]])} ${v._tag === "Some" ? num(v.value!) : "NaN"}`
    )
    lines.push(`${name}_sum${labels(key)} ${num(s.sum)}`, `${name}_count${labels(key)} ${s.count}`)
    return lines
  }
  if ("occurrences" in s) {
    return [...(s.occurrences as Map<string, number>).entries()].map(([k, v]) => `${name}${labels(key, [["value", k]])} ${v}`)
  }
  return [`${name}${labels(key)} ${num("count" in s ? s.count : s.value)}`]
}
