import MappedKV
import MappedKVCrypto
import MappedKVIO

/// An error from a cache: the manifest store's, a system call's, or a bad argument.
public enum CacheError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The manifest store failed (damage, a wrong key, a mode conflict, an I/O error).
    case store(MappedKVError)
    /// A file operation on a value file, the temporary folder or the trim lock failed.
    case system(SystemCallError)
    /// libcrypto or the system's random-number source failed while encrypting or decrypting a
    /// value file; the string says which. The entry was neither written nor removed.
    case crypto(String)
    /// A key is empty or too long for the manifest.
    case invalidKey(reason: String)
    /// An argument (directory, limit, threshold) is unusable.
    case invalidArgument(reason: String)
    /// The cache was closed.
    case closed
    /// ``DiskCache/increment(_:by:expiresAfter:)`` found a value under `key` that is not a
    /// counter (an integer in decimal digits); nothing was changed.
    case notACounter(key: String)
    /// ``DiskCache/increment(_:by:expiresAfter:)`` would take the counter under `key` past the
    /// range of `Int64`; nothing was changed.
    case counterOverflow(key: String)

    /// What failed, with the underlying error's description.
    public var description: String {
        switch self {
        case .store(let error): "cache manifest: \(error)"
        case .system(let error): "cache files: \(error)"
        case .crypto(let detail): "cache files: a cryptographic operation failed: \(detail)"
        case .invalidKey(let reason): "invalid cache key: \(reason)"
        case .invalidArgument(let reason): "invalid argument: \(reason)"
        case .closed: "the cache was closed"
        case .notACounter(let key):
            "the value of '\(key)' is not a counter (an integer in decimal digits); nothing was changed"
        case .counterOverflow(let key):
            "the counter '\(key)' would pass the range of Int64; nothing was changed"
        }
    }
}

/// Runs a call on the manifest store, turning its error into ``CacheError/store(_:)``.
@inline(__always)
func manifestCall<R>(_ body: () throws(MappedKVError) -> R) throws(CacheError) -> R {
    do { return try body() } catch { throw .store(error) }
}

/// Runs a file operation, turning its error into ``CacheError/system(_:)``.
@inline(__always)
func fileCall<R>(_ body: () throws(SystemError) -> R) throws(CacheError) -> R {
    do { return try body() } catch { throw .system(SystemCallError(error)) }
}

/// Runs a call into the crypto layer, turning its failure into ``CacheError/crypto(_:)``.
func cryptoCall<R>(_ body: () throws(CryptoFailure) -> R) throws(CacheError) -> R {
    do { return try body() } catch { throw .crypto(error.description) }
}
