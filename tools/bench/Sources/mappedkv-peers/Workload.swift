/// The workloads of `mappedkv bench`, in its order.
enum Workload: String, CaseIterable {
    /// N sets of the Int32 i under `int-<i>`.
    case setInt32 = "set_int32"
    /// N sets of `string-<i>` under `str-<i>`.
    case setString = "set_string"
    /// N gets of the Int32 keys; their sum is checked.
    case getInt32 = "get_int32"
    /// N gets of the string keys; their total UTF-8 bytes are checked.
    case getString = "get_string"
    /// N removes of the Int32 keys.
    case remove
    /// One close, reopen and full load of a separate store of N Int32 keys (averaged over 5 reopens).
    case reopenLoad = "reopen_load"

    /// Whether the figure is per operation (else per reopen).
    var isPerOperation: Bool { self != .reopenLoad }
}

/// The keys and values every store gets, built once before anything is timed.
struct WorkloadData: Sendable {
    let intKeys: [String]
    let stringKeys: [String]
    let strings: [String]

    init(n: Int) {
        intKeys = (0..<n).map { "int-\($0)" }
        stringKeys = (0..<n).map { "str-\($0)" }
        strings = (0..<n).map { "string-\($0)" }
    }

    var n: Int { intKeys.count }

    /// The Int32 value of key i.
    @inline(__always)
    static func intValue(_ i: Int) -> Int32 { Int32(truncatingIfNeeded: i) }

    /// The sum of the first `count` Int32 values.
    static func expectedSum(_ count: Int) -> Int64 {
        (0..<count).reduce(Int64(0)) { $0 &+ Int64(intValue($1)) }
    }

    /// The UTF-8 bytes of the first `count` strings.
    func expectedStringBytes(_ count: Int) -> Int {
        strings[0..<count].reduce(0) { $0 + $1.utf8.count }
    }
}
