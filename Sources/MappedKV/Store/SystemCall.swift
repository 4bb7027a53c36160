import MappedKVCrypto
import MappedKVIO

// The store's boundary with the layers below: their errors become MappedKVError cases here and
// nowhere else, so no type of the I/O or crypto layer reaches a caller.

/// Runs a call into the I/O layer, turning its ``SystemError`` into ``MappedKVError/system(_:)``:
/// the one place the store wraps system errors.
func systemCall<R>(_ body: () throws(SystemError) -> R) throws(MappedKVError) -> R {
    do { return try body() } catch { throw .system(SystemCallError(error)) }
}

/// Runs a call into the crypto layer, turning its failure into ``MappedKVError/crypto(_:)``.
func cryptoCall<R>(_ body: () throws(CryptoFailure) -> R) throws(MappedKVError) -> R {
    do { return try body() } catch { throw .crypto(error.description) }
}
