import Glibc

/// Private memory from an anonymous mapping: it reads as zeros, and the kernel supplies each page
/// on its first write, so a large buffer of which little is written costs only what is written.
package final class AnonymousMemory {
    /// The mapped bytes.
    package let bytes: UnsafeMutableRawBufferPointer

    /// Maps `length` bytes (at least one).
    package init(length: Int) throws(SystemError) {
        let size = max(length, 1)
        let pointer = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let pointer, pointer != MAP_FAILED else {
            throw SystemError("mmap", path: "(anonymous)", errno: Glibc.errno)
        }
        bytes = UnsafeMutableRawBufferPointer(start: pointer, count: size)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(base, bytes.count) }
    }
}
