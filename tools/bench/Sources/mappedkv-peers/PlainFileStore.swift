/// The floor of the large-value workload: no cache at all, one file per value named by its key,
/// written and read exactly as the file-based designs write and read their value files
/// (``CacheDirectory``: a temporary name renamed into place; `fstat` and one whole read).
final class PlainFileStore: BenchValueStore {
    private let directory: CacheDirectory

    init(directory path: String) throws { directory = try CacheDirectory(path) }

    @inline(__always)
    func set(_ value: [UInt8], forKey key: String) throws {
        try value.withUnsafeBytes { bytes in try directory.write(bytes, to: key, through: key + ".tmp") }
    }

    @inline(__always)
    func value(forKey key: String) throws -> [UInt8]? { try directory.read(key) }

    func close() throws { directory.close() }
}
