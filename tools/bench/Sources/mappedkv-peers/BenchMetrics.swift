// Metrics on or off for the MappedKV stores and caches of the benchmark.
//
// Invariant: without MAPPEDKV_BENCH_METRICS in the environment every store and cache is opened
// exactly as before metrics existed (no options); with it, they report under its value as a label
// prefix to swift-metrics' default factory, which this program never bootstraps: the no-op
// factory, so a run measures what reporting costs MappedKV, not what a backend costs.

import Glibc
import MappedKV

enum BenchMetrics {
    /// The options every MappedKV store and cache of the run opens with; nil when metrics are off.
    static let options: MetricsOptions? = getenv("MAPPEDKV_BENCH_METRICS").map {
        MetricsOptions(labelPrefix: String(cString: $0))
    }
}
