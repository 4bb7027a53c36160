/// Medians and spreads of the per-round samples.
enum Statistics {
    static func median(_ values: [Double]) -> Double {
        precondition(!values.isEmpty, "median of no samples")
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The largest sample over the smallest: how noisy the rounds were.
    static func spread(_ values: [Double]) -> Double {
        guard let low = values.min(), let high = values.max(), low > 0 else { return .nan }
        return high / low
    }
}
