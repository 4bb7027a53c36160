/// The staleness rule of the `cache` stress workload, checked over the journals of all children:
/// **no get returns a value older than the last write of its key that was acknowledged at least
/// 50 ms before the get began**, where a write is a put or a removal by any child.
///
/// Precisely. A write `w` of key `k` began at `b(w)` (the time taken before its intent was
/// journalled) and, if acknowledged, returned at `a(w)` (the time taken right after the call): it
/// took effect at some instant in `b(w)...a(w)`. A write in flight at a kill has no `a(w)`: it
/// took effect at some instant after `b(w)`, or never. A get of `k` began at `g`, returned at `e`,
/// and read at some instant in `g...e`. With the staleness bound `d` (50 ms), the writes of `k`
/// *settled* for the get are the acknowledged ones with `a(w) <= g - d`.
///
/// - A get that returns the value of put `p` is **stale** if some settled write `w` of `k` began
///   after `p` was acknowledged, `b(w) > a(p)`: `w` then surely took effect after `p`, and at
///   least `d` before the get began, so `p`'s value had been replaced or removed by then.
/// - Anything else of `k` that had begun may be returned: the value of a put that overlaps every
///   such later write (concurrent writes may land in either order, so any of them may win), of a
///   put acknowledged after `g - d`, or of a put in flight at a kill (it is never known to be over
///   before another write began, so it is never stale).
/// - A get must not return a value whose put began after the get returned (`b(p) > e`), nor one
///   that no journal put under `k`.
/// - A miss is always allowed: trims and the byte limit evict entries, and a kill may lose one.
///
/// One settled write suffices as a witness, and the one that began last is the best, so the check
/// keeps, per key, the writes in order of acknowledgement with the latest-begun one among each
/// prefix, and answers a get with a binary search.
extension CacheStressTimeline {
    /// The staleness bound `d`, in nanoseconds: 50 ms.
    static let staleness: UInt64 = 50_000_000

    /// The acknowledged writes of one key in order of acknowledgement time.
    private struct SettledWrites {
        /// The acknowledgement times, ascending.
        var acknowledged: [UInt64] = []
        /// For each prefix `0...i`, the index into ``CacheStressTimeline/writes`` of the write that
        /// began last.
        var latestBegun: [Int] = []

        /// The index of the write that began last among those acknowledged at or before
        /// `horizon`; nil if there is none.
        func latestBegun(acknowledgedBy horizon: UInt64) -> Int? {
            var low = 0
            var high = acknowledged.count
            while low < high {
                let middle = (low + high) / 2
                if acknowledged[middle] <= horizon { low = middle + 1 } else { high = middle }
            }
            return low == 0 ? nil : latestBegun[low - 1]
        }
    }

    /// The gets that break the rule above with bound `staleness` (nanoseconds), and the journal
    /// lines that left a write without its times, as violations.
    func staleReads(staleness: UInt64 = Self.staleness) -> [String] {
        var puts: [CacheStressValue.Writer: Int] = [:]
        for (index, write) in writes.enumerated() where write.isPut { puts[write.writer] = index }
        let settled = settledWrites()
        var violations = problems
        for get in gets {
            guard case .value(let writer) = get.read.result else { continue }
            let read = get.read
            let reader =
                "child \(get.child) incarnation \(get.incarnation) operation \(read.opno), begun at \(StressClock.offset(read.begin, from: origin))"
            guard let index = puts[writer], writes[index].key == read.key else {
                violations.append(
                    "get of \(read.key) by \(reader): it returned the value of \(writer), which no journal put under \(read.key)"
                )
                continue
            }
            let put = writes[index]
            if put.begin > read.end {
                violations.append(
                    "get of \(read.key) by \(reader): it returned the value of the \(put.describe(origin: origin)), which began after the get returned at \(StressClock.offset(read.end, from: origin))"
                )
                continue
            }
            guard let putAcknowledged = put.acknowledged, read.begin >= staleness,
                let latest = settled[read.key]?.latestBegun(acknowledgedBy: read.begin - staleness),
                writes[latest].begin > putAcknowledged, let acknowledged = writes[latest].acknowledged
            else { continue }
            violations.append(
                "stale get of \(read.key) by \(reader): it returned the value of the \(put.describe(origin: origin)), but should have seen the \(writes[latest].describe(origin: origin)), which began after that put was acknowledged and was acknowledged \(StressClock.milliseconds(read.begin - acknowledged)) before the get began"
            )
        }
        return violations
    }

    /// The acknowledged writes of every key, indexed for ``SettledWrites/latestBegun(acknowledgedBy:)``.
    private func settledWrites() -> [String: SettledWrites] {
        var byKey: [String: [(acknowledged: UInt64, index: Int)]] = [:]
        for (index, write) in writes.enumerated() {
            guard let acknowledged = write.acknowledged else { continue }
            byKey[write.key, default: []].append((acknowledged, index))
        }
        return byKey.mapValues { entries in
            var settled = SettledWrites()
            for entry in entries.sorted(by: { $0.acknowledged < $1.acknowledged }) {
                var latest = entry.index
                if let previous = settled.latestBegun.last, writes[previous].begin > writes[latest].begin {
                    latest = previous
                }
                settled.acknowledged.append(entry.acknowledged)
                settled.latestBegun.append(latest)
            }
            return settled
        }
    }
}
