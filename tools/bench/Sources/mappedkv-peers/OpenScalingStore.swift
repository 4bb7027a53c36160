import ArgumentParser

/// A store the open-scaling bench drives itself, in this process and in its children: the
/// ``BenchStore`` adapters of the peer comparison (the same opens, sets and gets), plus what a
/// writer does after overwriting keys.
protocol OpenScalingStore: BenchStore {
    /// What the bench's parent and children call this store on the command line.
    static var kind: OpenScalingKind { get }

    /// Makes the writes so far one compact store, as a writer process would before it exits:
    /// MappedKV's `trim()`, a full write-back; LMDB has no such step (a commit is final).
    func writeBack() throws
}

/// The stores the bench drives itself; MMKV runs in an external driver (``MMKVDriver``).
enum OpenScalingKind: String, CaseIterable, ExpressibleByArgument {
    case mappedkv, lmdb

    var displayName: String {
        switch self {
        case .mappedkv: "MappedKV"
        case .lmdb: "LMDB"
        }
    }
}

extension MappedKVStore: OpenScalingStore where Variant: OpenScalingMappedKVVariant {
    static var kind: OpenScalingKind { .mappedkv }

    func writeBack() throws { try store.trim() }
}

extension LMDBStore: OpenScalingStore {
    static var kind: OpenScalingKind { .lmdb }

    func writeBack() throws {}
}
