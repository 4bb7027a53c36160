import MappedKVIO

/// Runs a call into the I/O layer, turning its ``SystemError`` into ``MappedKVError/system(_:)``:
/// the one place the store wraps system errors.
@inline(__always)
func systemCall<R>(_ body: () throws(SystemError) -> R) throws(MappedKVError) -> R {
    do { return try body() } catch { throw .system(SystemCallError(error)) }
}
