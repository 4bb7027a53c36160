import Glibc

/// Hints to the kernel about how process memory will be used (`madvise`).
package enum MemoryAdvice {
    /// The size of a transparent huge page on x86-64 and most arm64 kernels.
    package static let hugePageSize = 2 << 20

    /// Asks for transparent huge pages over the 2 MiB-aligned part of `region`, before it is first
    /// touched. A table probed at random addresses then costs far fewer TLB misses. Purely a hint:
    /// kernels without THP, or with it set to `never`, ignore it, and so does this call on failure.
    package static func preferHugePages(_ region: UnsafeMutableRawBufferPointer) {
        guard let base = region.baseAddress else { return }
        let address = UInt(bitPattern: base)
        let start = (address + UInt(hugePageSize) - 1) & ~UInt(hugePageSize - 1)
        let end = (address + UInt(region.count)) & ~UInt(hugePageSize - 1)
        guard end > start, let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(aligned, Int(end - start), MADV_HUGEPAGE)
    }
}
