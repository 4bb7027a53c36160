import Glibc

/// A shared memory mapping of a whole file, read-only or read-write.
///
/// The mapping is released by ``unmap()`` or when the region is deinitialized. Never touch
/// ``bytes`` beyond ``length``: that length was checked against the file when it was mapped.
package final class MappedRegion {
    /// Where the current mapping is recorded. Every append and every multi-process read loads it,
    /// so it lives behind a pointer fixed for the region's life rather than in a `var`, whose
    /// every access from another module pays a dynamic exclusivity check. The owner serializes
    /// all use of a region.
    @usableFromInline let current: UnsafeMutablePointer<UnsafeMutableRawBufferPointer>

    /// The mapped bytes.
    @inlinable package var bytes: UnsafeMutableRawBufferPointer { current.pointee }
    /// Whether the mapping allows writes.
    package let isWritable: Bool
    /// The path of the mapped file, for error messages.
    package let path: String

    /// The number of mapped bytes.
    @inlinable package var length: Int { bytes.count }

    /// Maps `length` bytes of `file` from offset 0 with `MAP_SHARED`.
    package init(file: FileDescriptor, length: Int, writable: Bool) throws(SystemError) {
        self.isWritable = writable
        self.path = file.path
        let mapping = try Self.map(file: file, length: length, writable: writable)
        current = UnsafeMutablePointer<UnsafeMutableRawBufferPointer>.allocate(capacity: 1)
        current.initialize(to: mapping)
    }

    deinit {
        unmap()
        current.deallocate()
    }

    /// Replaces the mapping with one of `length` bytes of `file`.
    package func remap(file: FileDescriptor, length: Int) throws(SystemError) {
        let fresh = try Self.map(file: file, length: length, writable: isWritable)
        unmap()
        current.pointee = fresh
    }

    /// Writes dirty pages back to the file and waits for the write.
    package func synchronize() throws(SystemError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        _ = try syscall("msync", path: path) { msync(base, bytes.count, MS_SYNC) }
    }

    /// Releases the mapping; later accesses see an empty region.
    package func unmap() {
        if let base = bytes.baseAddress, !bytes.isEmpty { munmap(base, bytes.count) }
        current.pointee = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    private static func map(
        file: FileDescriptor, length: Int, writable: Bool
    ) throws(SystemError) -> UnsafeMutableRawBufferPointer {
        guard length > 0 else { return UnsafeMutableRawBufferPointer(start: nil, count: 0) }
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        while true {
            let pointer = mmap(nil, length, protection, MAP_SHARED, file.rawValue, 0)
            if let pointer, pointer != MAP_FAILED {
                return UnsafeMutableRawBufferPointer(start: pointer, count: length)
            }
            let code = Glibc.errno
            if code == EINTR { continue }
            throw SystemError("mmap", path: file.path, errno: code)
        }
    }
}
