import ArgumentParser

/// The stores `--stores` can name.
enum StoreKind: String, CaseIterable, ExpressibleByArgument {
    case mappedkv
    case mappedkvMultiProcess = "mappedkv-mp"
    case mappedkvEncrypted = "mappedkv-enc"
    case sqlite, lmdb, userdefaults

    var displayName: String {
        switch self {
        case .mappedkv: "MappedKV"
        case .mappedkvMultiProcess: "MappedKV multi-process"
        case .mappedkvEncrypted: "MappedKV AES-128"
        case .sqlite: "SQLite"
        case .lmdb: "LMDB"
        case .userdefaults: "UserDefaults"
        }
    }

    /// The store's colour in the chart: MappedKV's modes in shades of one blue, each peer its own hue.
    var colour: String {
        switch self {
        case .mappedkv: "#1f5fa8"
        case .mappedkvMultiProcess: "#5b9bd5"
        case .mappedkvEncrypted: "#a9cbed"
        case .sqlite: "#8e44ad"
        case .lmdb: "#6c757d"
        case .userdefaults: "#e07b00"
        }
    }

    /// How the store is configured and driven, for the report.
    var setup: String {
        switch self {
        case .mappedkv:
            "single-process, unencrypted; a set appends to the mapped file (no fsync; full write-backs msync)"
        case .mappedkvMultiProcess:
            "as MappedKV, in multi-process mode: every write takes the exclusive flock and checks the meta and file size, "
                + "every read compares the meta stamp in the shared mapping (no system call when nothing changed)"
        case .mappedkvEncrypted:
            "as MappedKV, encrypted with AES-128-CFB (libcrypto): appends encrypt as they are written, loads decrypt the region"
        case .sqlite:
            "libsqlite3 \(SQLiteStore.libraryVersion), WAL, synchronous=NORMAL, WITHOUT ROWID table kv(key TEXT PRIMARY KEY, value BLOB), "
                + "prepared statements, one autocommit statement per operation; reopen_load = open + SELECT value FROM kv"
        case .lmdb:
            "\(LMDBStore.libraryVersion), MDB_NOSYNC|MDB_NOMETASYNC, one write txn per set/remove, "
                + "gets through one reused read-only txn (mdb_txn_renew/mdb_txn_reset per get); reopen_load = env open + cursor walk"
        case .userdefaults:
            "swift-corelibs-foundation UserDefaults(suiteName: <dir>/defaults): set(_:forKey:), integer(forKey:), string(forKey:), "
                + "removeObject(forKey:); nothing reaches the file until synchronize() (untimed, before reopen_load); "
                + "reopen_load = new instance + dictionaryRepresentation() in the same process, where CFPreferences keeps the "
                + "domain cached (strace: the 5 reopens read the plist at most once)"
        }
    }

    /// Runs every workload on this store: a direct call of the generic driver with the concrete
    /// type, so each store's loops are specialized.
    func run(data: WorkloadData, n: Int, directory: String) throws -> RoundResult {
        switch self {
        case .mappedkv: try Workloads.run(MappedKVStore<PlainVariant>.self, data: data, n: n, directory: directory)
        case .mappedkvMultiProcess:
            try Workloads.run(MappedKVStore<MultiProcessVariant>.self, data: data, n: n, directory: directory)
        case .mappedkvEncrypted:
            try Workloads.run(MappedKVStore<EncryptedVariant>.self, data: data, n: n, directory: directory)
        case .sqlite: try Workloads.run(SQLiteStore.self, data: data, n: n, directory: directory)
        case .lmdb: try Workloads.run(LMDBStore.self, data: data, n: n, directory: directory)
        case .userdefaults: try Workloads.run(UserDefaultsStore.self, data: data, n: n, directory: directory)
        }
    }
}
