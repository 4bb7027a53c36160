import Glibc

/// The size of a virtual-memory page on this machine; MMKV sizes files in whole pages.
package enum PageSize {
    /// The page size in bytes (4096 on x86-64 Linux).
    package static let current: Int = {
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? size : 4096
    }()

    /// `size` rounded up to a whole number of pages, at least one page.
    package static func roundUp(_ size: Int, pageSize: Int = current) -> Int {
        guard size > pageSize else { return pageSize }
        return (size + pageSize - 1) / pageSize * pageSize
    }
}
