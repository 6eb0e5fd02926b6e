import { MetricBoundaries, MetricKey } from "effect"

// Per actor kind (label `kind`), used through `labelled`. Gauges are set by the partition owners
// of this node.

export const commandsProcessed = MetricKey.counter("herald_actor_commands_processed_total", {
  description: "Actor commands applied and committed",
  incremental: true
})

export const commandsFailed = MetricKey.counter("herald_actor_command_failures_total", {
  description: "Failed tries of actor commands (each retry counts)",
  incremental: true
})

export const commandsParked = MetricKey.counter("herald_actor_commands_parked_total", {
  description: "Actor commands parked in the poison table after their last try",
  incremental: true
})

export const mailboxDepth = MetricKey.gauge("herald_actor_mailbox_depth", {
  description: "Commands received by this node and not yet acknowledged"
})

export const activeActors = MetricKey.gauge("herald_actor_active", {
  description: "Actors in memory on this node (not passivated)"
})

export const partitionsOwned = MetricKey.gauge("herald_actor_partitions_owned", {
  description: "Partitions this node owns"
})

export const leaseChanges = MetricKey.counter("herald_actor_lease_changes_total", {
  description: "Leases acquired, released (hand-off) and lost, by event",
  incremental: true
})

export const processingSeconds = MetricKey.histogram(
  "herald_actor_processing_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "From a command's arrival at its owner to its commit"
)

export const timerLatenessSeconds = MetricKey.histogram(
  "herald_actor_timer_lateness_seconds",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "How late a durable timer's command was applied after its due time"
)

export const commitBatchSize = MetricKey.histogram(
  "herald_actor_commit_batch_size",
  MetricBoundaries.fromIterable([1, 2, 5, 10, 25, 50, 100, 250, 500, 1000]),
  "Actor state changes written per group-commit transaction"
)
