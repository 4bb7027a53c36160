import Foundation

/// Counts the acknowledged operations (`A` lines, and the cache workload's `G` lines) in the
/// children's journals while they grow, reading only what was appended since the last count.
struct StressProgress {
    private let paths: [String]
    private var offsets: [UInt64]
    private var counts: [Int]

    /// A counter for the journals of children `0..<processes` in `root`.
    init(root: String, processes: Int) {
        paths = (0..<processes).map { StressJournal.path(root: root, child: $0) }
        offsets = Array(repeating: 0, count: processes)
        counts = Array(repeating: 0, count: processes)
    }

    /// The acknowledged operations over all journals so far.
    mutating func acknowledged() -> Int {
        for index in paths.indices { scan(index) }
        return counts.reduce(0, +)
    }

    /// The acknowledged operations in the journal of child `child` so far.
    mutating func acknowledged(child: Int) -> Int {
        scan(child)
        return counts[child]
    }

    /// Counts the complete lines appended to journal `index` since the last scan.
    private mutating func scan(_ index: Int) {
        guard let handle = FileHandle(forReadingAtPath: paths[index]) else { return }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: offsets[index])) != nil,
            let data = try? handle.readToEnd(), let lastNewline = data.lastIndex(of: UInt8(ascii: "\n"))
        else { return }
        let complete = data[data.startIndex...lastNewline]
        for line in complete.split(separator: UInt8(ascii: "\n"))
        where line.starts(with: [UInt8(ascii: "A"), UInt8(ascii: " ")])
            || line.starts(with: [UInt8(ascii: "G"), UInt8(ascii: " ")])
        {
            counts[index] += 1
        }
        offsets[index] += UInt64(complete.count)
    }
}
