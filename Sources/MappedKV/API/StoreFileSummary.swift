/// One store found in a root directory by ``MappedKV/stores(in:)``, described from its files
/// without opening it.
public struct StoreFileSummary: Sendable, Equatable {
    /// The store's ID, or nil for a store kept under `specialCharacter/` (its file name is the
    /// MD5 of an ID with special characters, which cannot be turned back into the ID).
    public var id: String?
    /// The data file's name: the ID, or the MD5 hex digest for a hashed ID.
    public var fileName: String
    /// Where the files are, for the storage-level functions. For a hashed ID this names the store
    /// as `<fileName>` in `<root>/specialCharacter`, which is the same pair of files.
    public var location: StoreLocation
    /// The data file's size in bytes.
    public var dataFileSize: Int
    /// The meta (`.crc`) file's size in bytes.
    public var metaFileSize: Int
    /// Whether a write-back journal is present (a write-back in progress, or an interrupted one).
    public var hasJournal: Bool
}
