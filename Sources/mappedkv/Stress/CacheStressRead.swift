/// One get of the `cache` stress workload as its journal line `G` records it, once the call has
/// returned: enough for the verifier to tell, against every child's journalled writes, whether
/// the get could have returned what it did (``CacheStressTimeline``).
///
/// Both times are ``StressClock`` readings: `begin` right before the call, `end` right after it,
/// so the get took effect somewhere in `begin...end`.
struct CacheStressRead: Equatable, Sendable {
    /// What the get returned.
    enum Result: Equatable, Sendable {
        /// Nothing.
        case miss
        /// Bytes that are not a whole value of the key (the child journalled a `V` line for them).
        case invalid
        /// The whole value the put of `Writer` stored.
        case value(CacheStressValue.Writer)

        /// The result as one journal word: `miss`, `invalid` or ``CacheStressValue/Writer/token``.
        var word: String {
            switch self {
            case .miss: "miss"
            case .invalid: "invalid"
            case .value(let writer): writer.token
            }
        }

        /// Parses a journal word; nil if it is none of the three.
        init?(word: Substring) {
            switch word {
            case "miss": self = .miss
            case "invalid": self = .invalid
            default:
                guard let writer = CacheStressValue.Writer(token: word) else { return nil }
                self = .value(writer)
            }
        }
    }

    /// The child's operation number of the get.
    var opno: Int
    /// The key read.
    var key: String
    /// The ``StressClock`` time taken right before the call.
    var begin: UInt64
    /// The ``StressClock`` time taken right after the call returned.
    var end: UInt64
    /// What it returned.
    var result: Result
}
