import MappedKVCrypto

/// Where a store's two files live: `<directory>/<id>` and `<directory>/<id>.crc`.
///
/// IDs containing any of `\ / : * ? " < > |` are stored as `<directory>/specialCharacter/<md5 hex of id>`,
/// as MMKV does (docs/FORMAT.md section 1).
public struct StoreLocation: Equatable, Hashable, Sendable {
    /// The store's ID, as given.
    public let id: String
    /// The root directory given by the caller.
    public let directory: String
    /// The directory that holds the files (the root, or its `specialCharacter` folder).
    public let fileDirectory: String
    /// The data file's path.
    public let dataPath: String
    /// The meta (`.crc`) file's path.
    public let metaPath: String
    /// The path of MappedKV's write-back journal (`<data file>.writeback`), which exists only while
    /// a full write-back is in progress or was interrupted.
    public var journalPath: String { dataPath + ".writeback" }
    /// The path of the shared-memory lock file (`<data file>.lock`), which exists while the store
    /// is shared with ``ProcessLock/sharedMemory`` (docs/FORMAT.md 6.6).
    public var lockPath: String { dataPath + ".lock" }
    /// The path of the index file (`<data file>.index`): a snapshot of the store's key index that
    /// lets an open skip decoding the log (docs/FORMAT.md section 12). Derived data: deleting it
    /// loses nothing.
    public var indexPath: String { dataPath + ".index" }

    /// The characters that make MMKV hash an ID into a file name.
    static let specialCharacters: Set<Character> = ["\\", "/", ":", "*", "?", "\"", "<", ">", "|"]

    /// Resolves the paths of store `id` under `directory`.
    public init(id: String, directory: String) throws(MappedKVError) {
        guard !id.isEmpty else { throw .invalidArgument("store ID is empty") }
        guard !id.utf8.contains(0) else { throw .invalidArgument("store ID contains a NUL byte") }
        guard !directory.isEmpty else { throw .invalidArgument("store directory is empty") }
        self.id = id
        self.directory = directory
        let root = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        let name: String
        if id.contains(where: Self.specialCharacters.contains) {
            fileDirectory = root + "/specialCharacter"
            name = try cryptoCall { () throws(CryptoFailure) in try MD5.hexDigest(Array(id.utf8)) }
        } else {
            guard id != "." && id != ".." else { throw .invalidArgument("store ID '\(id)' is not a file name") }
            fileDirectory = root
            name = id
        }
        dataPath = fileDirectory + "/" + name
        metaPath = dataPath + ".crc"
    }
}
