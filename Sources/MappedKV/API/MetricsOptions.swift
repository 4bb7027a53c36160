// What a caller gives to have a store or a cache report through swift-metrics.
//
// Invariant: nothing here creates a metric; the store and the cache create theirs once, at open,
// and only when they are given options (no options, no metric objects and no factory call).

import CoreMetrics

/// Asks a store (``Configuration/metrics``) or a cache (`DiskCacheConfiguration.metrics` in
/// `MappedKVCache`) to report what it does through swift-metrics.
///
/// Every metric is named `<labelPrefix>.<name>`, carries ``dimensions`` after its own, and is
/// made once, when the store or cache opens, by ``factory`` (or, when that is nil, by the
/// factory `MetricsSystem` has at that moment). Without options nothing is created and reporting
/// costs one branch at each point that would report. The library never bootstraps
/// `MetricsSystem`: the application does, or passes a factory here.
///
/// ```swift
/// let options = MetricsOptions(labelPrefix: "settings", dimensions: [("app", "editor")])
/// let store = try MappedKV(
///     id: "settings", directory: directory, configuration: Configuration(metrics: options))
/// ```
///
/// The labels are listed in the Metrics article of each module's documentation.
public struct MetricsOptions: Sendable {
    /// The start of every label, without a trailing dot: `settings` gives `settings.store.operations`.
    public var labelPrefix: String
    /// Dimensions added to every metric, after the metric's own (such as `op` or `tier`).
    public var dimensions: [(String, String)]
    /// The factory that makes the metrics; nil uses `MetricsSystem.factory` as of the open.
    public var factory: (any MetricsFactory)?

    /// Options that name every metric `<labelPrefix>.<name>`.
    ///
    /// - Parameters:
    ///   - labelPrefix: the start of every label, without a trailing dot.
    ///   - dimensions: dimensions added to every metric; none by default.
    ///   - factory: the factory that makes the metrics; nil (the default) uses the one
    ///     `MetricsSystem` has when the store or cache opens.
    public init(labelPrefix: String, dimensions: [(String, String)] = [], factory: (any MetricsFactory)? = nil) {
        self.labelPrefix = labelPrefix
        self.dimensions = dimensions
        self.factory = factory
    }

    /// A counter named `<labelPrefix>.<name>` with `dimensions` and then the options' own.
    package func counter(_ name: String, _ dimensions: [(String, String)] = []) -> Counter {
        let label = labelPrefix + "." + name
        let dimensions = dimensions + self.dimensions
        guard let factory else { return Counter(label: label, dimensions: dimensions) }
        return Counter(
            label: label, dimensions: dimensions, handler: factory.makeCounter(label: label, dimensions: dimensions))
    }

    /// A meter (a gauge that is set) named `<labelPrefix>.<name>` with the options' dimensions.
    package func meter(_ name: String) -> Meter {
        let label = labelPrefix + "." + name
        guard let factory else { return Meter(label: label, dimensions: dimensions) }
        return Meter(
            label: label, dimensions: dimensions, handler: factory.makeMeter(label: label, dimensions: dimensions))
    }
}
