import MappedKV

/// How a MappedKV store in the comparison is opened.
protocol MappedKVVariant {
    /// The configuration every open of the store uses.
    static var configuration: Configuration { get }
}

/// Single-process, unencrypted: the configuration `mappedkv bench` uses by default.
enum PlainVariant: MappedKVVariant {
    static var configuration: Configuration { Configuration(metrics: BenchMetrics.options) }
}

/// Multi-process mode: every write takes the flock, every read compares the meta stamp
/// (`mappedkv bench --multi-process`).
enum MultiProcessVariant: MappedKVVariant {
    static var configuration: Configuration { Configuration(isMultiProcess: true, metrics: BenchMetrics.options) }
}

/// AES-128-CFB, single-process (`mappedkv bench --crypt-key bench-key`).
enum EncryptedVariant: MappedKVVariant {
    static let key = CryptKey(Array("bench-key".utf8), aes256: false)
    static var configuration: Configuration { Configuration(cryptKey: key, metrics: BenchMetrics.options) }
}

/// MappedKV opened as `Variant` says.
final class MappedKVStore<Variant: MappedKVVariant>: BenchStore {
    static var storeID: String { "bench" }
    let store: MappedKV

    init(directory: String) throws {
        store = try MappedKV(id: Self.storeID, directory: directory, configuration: Variant.configuration)
    }

    // Not inlined: inlined into the specialized driver, these two were still called through the
    // BenchStore witness table in every iteration (seen with objdump, Swift 6.3); out of line they
    // are plain direct calls, like every other call of the timed loops.
    @inline(never)
    func setInt32(_ value: Int32, forKey key: String) throws { try store.set(value, forKey: key) }

    @inline(never)
    func setString(_ value: String, forKey key: String) throws { try store.set(value, forKey: key) }

    @inline(__always)
    func int32(forKey key: String) throws -> Int32? { try store.int32(forKey: key) }

    @inline(__always)
    func string(forKey key: String) throws -> String? { try store.string(forKey: key) }

    @inline(__always)
    func remove(forKey key: String) throws { try store.removeValue(forKey: key) }

    func contains(_ key: String) throws -> Bool { try store.contains(key) }

    func close() throws { store.close() }

    /// The open reads, checks (CRC, sizes, decoding) and indexes every record, as in
    /// `mappedkv bench`; `count` then reports the keys loaded.
    static func reopenAndLoad(directory: String) throws -> LoadedEntries {
        let reopened = try MappedKV(id: storeID, directory: directory, configuration: Variant.configuration)
        defer { reopened.close() }
        return LoadedEntries(count: try reopened.count, sum: nil)
    }
}
