import MappedKVFormat

/// Why a store's files could not be loaded.
public enum CorruptionReason: Error, Equatable, Sendable, CustomStringConvertible {
    /// The meta file could not be parsed.
    case metaUnreadable(String)
    /// The used size recorded for the data region does not fit in the data file.
    case lengthOutOfRange(actualSize: Int, fileSize: Int)
    /// The CRC of the data region differs from the one in the meta file.
    case crcMismatch(stored: UInt32, computed: UInt32)
    /// The CRC matches but the records do not decode: the wrong encryption key (or a key for a plain
    /// store, or none for an encrypted one), or damage the CRC did not catch.
    case undecodable(FormatError)
    /// The data file holds data but its meta file is missing, empty or zeroed.
    case metaFileMissing
    /// The meta file records data but the data file is missing.
    case dataFileMissing
    /// A full write-back was interrupted and only a read-write open can finish it.
    case interruptedWriteBack

    /// What was found, in words (CRC values in hex).
    public var description: String {
        switch self {
        case .metaUnreadable(let detail): "meta file unreadable: \(detail)"
        case .lengthOutOfRange(let size, let fileSize):
            "actual size \(size) does not fit in a data file of \(fileSize) bytes"
        case .crcMismatch(let stored, let computed):
            "CRC mismatch: meta says \(hex(stored)), data has \(hex(computed))"
        case .undecodable(let error): "wrong encryption key or corrupted data: the records do not decode (\(error))"
        case .metaFileMissing: "the data file holds data but its .crc meta file is missing, empty or zeroed"
        case .dataFileMissing: "the .crc meta file records data but the data file is missing"
        case .interruptedWriteBack: "a write-back was interrupted; open the store read-write to finish it"
        }
    }
}

private func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}

/// An error from a MappedKV store.
///
/// Every case's ``description`` (also its `localizedDescription`) says what happened, to which store
/// where one is involved, and what to do about it.
public enum MappedKVError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A key is empty or longer than `RecordLimits.maximumKeyLength` (16,384 bytes).
    case invalidKey(String)
    /// A value payload is 2 GiB or larger, which MMKV cannot read back.
    case valueTooLarge(size: Int)
    /// An argument (store ID, directory, payload) is unusable.
    case invalidArgument(String)
    /// The store is of another kind than the open expects (``StoreKind``): `expected` is the
    /// open's kind (nil for a plain open), `found` the store's (nil for an unmarked store that
    /// holds keys). Nothing was changed.
    case wrongStoreKind(id: String, expected: String?, found: String?)
    /// The data region would outgrow what the format can address.
    case storeFull(String)
    /// The store's files are damaged or inconsistent; nothing was changed on disk.
    case corrupted(id: String, reason: CorruptionReason)
    /// The store's records do not decode with the encryption key it was opened with: the key is
    /// wrong, or a key was given for a plain store, or none for an encrypted one. The files are
    /// intact as far as their CRC can tell, and nothing was changed.
    case wrongCryptKey(id: String, reason: CorruptionReason)
    /// The store looks encrypted and no key was given: its meta file holds an IV (which MMKV
    /// writes for an encrypted store) and its records do not load as plain text. Thrown before any
    /// ``Configuration/recoveryHandler`` is consulted, so that a recovery never turns ciphertext
    /// into plain keys; the files are left exactly as they were. Open it with its key, or, if it
    /// is a plain store that kept a stale IV (as one decrypted by ``MappedKV/rekey(to:)`` does),
    /// with ``Configuration/treatsStoreAsPlain``.
    case missingCryptKey(id: String)
    /// A store opened read-only was asked to write.
    case readOnly(id: String)
    /// The store was closed.
    case closed(String)
    /// A read-only open found no store.
    case storeNotFound(path: String)
    /// A stored value could not be decoded as the requested type: the type-mismatch error, thrown
    /// when the bytes cannot be that type (docs/FORMAT.md 2.5). `reason` says what the bytes are.
    case valueDecodingFailed(key: String, type: String, reason: String)
    /// A value could not be encoded (for example a `Codable` value that fails to encode).
    case valueEncodingFailed(key: String, reason: String)
    /// The store needs a feature this version does not provide.
    case unsupported(String)
    /// The store is open in another process in a mode that cannot share it (single-process
    /// mode against anything else), or in this process with a different configuration.
    case modeConflict(id: String, reason: String)
    /// A system call failed: which operation, on which file, with which `errno` (``SystemCallError``).
    case system(SystemCallError)
    /// libcrypto or the system's random-number source failed (an allocation, a cipher or digest
    /// call, random bytes for an IV); the string says which. Nothing was committed to the files; a
    /// store that was writing when it happened is closed, as after an I/O failure.
    case crypto(String)
    // Storage-level operations (MappedKV+Storage.swift, MappedKV+Backup.swift).
    /// A storage-level operation (remove, restore) was asked for a store this process has open.
    case storeInUse(id: String, operation: String)
    /// A backup or restore could not use the files it was given.
    case backupFailed(id: String, reason: String)
    // Counters (MappedKV+Counters.swift).
    /// ``MappedKV/increment(_:by:expiresAfter:)`` found a value under `key` that is not a counter
    /// (not exactly one `Int64`); nothing was changed.
    case notACounter(key: String)
    /// ``MappedKV/increment(_:by:expiresAfter:)`` would take the counter under `key` past the range
    /// of `Int64`: `value` plus `delta` does not fit. Nothing was changed.
    case counterOverflow(key: String, value: Int64, delta: Int64)

    /// What happened, to which store, and what to do about it.
    public var description: String {
        switch self {
        case .invalidKey(let reason):
            "invalid key: \(reason); keys are 1 to \(RecordLimits.maximumKeyLength) bytes of UTF-8"
        case .valueTooLarge(let size):
            "a value of \(size) bytes is too large: values must be under 2 GiB, which MMKV can read back; "
                + "keep large data in a file of its own and store its path"
        case .invalidArgument(let reason): "invalid argument: \(reason)"
        case .wrongStoreKind(let id, let expected, let found): Self.wrongKindMessage(id, expected, found)
        case .storeFull(let reason):
            "store full: \(reason); remove keys or split the data over several stores"
        case .corrupted(let id, .interruptedWriteBack):
            "store '\(id)' has an interrupted write-back, which only a read-write open can finish: open it "
                + "without isReadOnly once; nothing was changed"
        case .corrupted(let id, let reason):
            "store '\(id)' is damaged: \(reason); its files were left unchanged. StoreInspector "
                + "(`mappedkv verify`) shows the damage; a recoveryHandler (`mappedkv repair`) recovers what can "
                + "be verified"
        case .wrongCryptKey(let id, let reason):
            "store '\(id)' does not decode with the encryption key given (\(reason)): the key is wrong, or the "
                + "store is plain and a key was given, or it is encrypted and none was; its files were left "
                + "unchanged. Open it with the key it was written with"
        case .missingCryptKey(let id):
            "store '\(id)' looks encrypted (its meta file holds an IV) and no key was given: pass its key; its "
                + "files were left unchanged. If it is a plain store that kept a stale IV, open it with "
                + "treatsStoreAsPlain (`mappedkv repair --plain`)"
        case .readOnly(let id):
            "store '\(id)' is open read-only: open it without isReadOnly to write"
        case .closed(let reason): reason
        case .storeNotFound(let path):
            "no store at \(path): check the directory and ID; a read-write open with createsIfMissing (the "
                + "default) creates it"
        case .valueDecodingFailed(let key, let type, let reason):
            "the value of '\(key)' is not a valid \(type) (\(reason)): read it as the type it was written as"
        case .valueEncodingFailed(let key, let reason): "the value for '\(key)' could not be encoded: \(reason)"
        case .unsupported(let what): "unsupported: \(what)"
        case .modeConflict(let id, let detail): "store '\(id)' cannot be opened in this mode: \(detail)"
        case .system(let error): error.description
        case .crypto(let detail): "a cryptographic operation failed: \(detail); nothing was committed"
        case .storeInUse(let id, let operation):
            "store '\(id)' is open in this process; close every handle on it before \(operation)"
        case .backupFailed(let id, let reason): "backup of store '\(id)': \(reason); nothing was changed"
        case .notACounter(let key):
            "the value of '\(key)' is not a counter (one Int64); nothing was changed: remove it or use another key"
        case .counterOverflow(let key, let value, let delta):
            "adding \(delta) to the counter '\(key)' (\(value)) would pass the range of Int64; nothing was changed"
        }
    }
}

extension MappedKVError {
    /// The error for a data region that would outgrow what the format can address.
    static var regionFull: MappedKVError {
        .storeFull("the data region would exceed \(RecordLimits.maximumRegionLength) bytes")
    }
}
