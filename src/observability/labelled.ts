import { Metric, MetricKey, MetricLabel, type MetricKeyType } from "effect"

/**
 * The metric of `key` with fixed labels, for hot paths. Effect's `Metric.tagged` merges its labels
 * into a new array on every update, which misses the hook cache and builds and hashes a new metric
 * key each time; a key built once with its labels is resolved once.
 */
export const labelled = <Type extends MetricKeyType.MetricKeyType<any, any>>(
  key: MetricKey.MetricKey<Type>,
  labels: Readonly<Record<string, string>>
) => Metric.fromMetricKey(MetricKey.taggedWithLabels(key, Object.entries(labels).map(([name, value]) => MetricLabel.make(name, value))))
