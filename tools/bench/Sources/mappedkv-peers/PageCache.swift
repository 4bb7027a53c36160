import Glibc

/// Puts a store's files in the page cache by reading each one through once, so that an open timed
/// next measures the store's own work and not the disk.
enum PageCache {
    /// Reads every regular file directly in `directory` to its end; returns the bytes read.
    @discardableResult
    static func warm(_ directory: String) throws -> Int {
        guard let stream = opendir(directory) else { throw BenchError("cannot open \(directory): errno \(errno)") }
        defer { closedir(stream) }
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while let entry = readdir(stream) {
            guard entry.pointee.d_type == UInt8(DT_REG) else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            let fd = open("\(directory)/\(name)", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw BenchError("cannot open \(directory)/\(name): errno \(errno)") }
            defer { close(fd) }
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count == 0 { break }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw BenchError("cannot read \(directory)/\(name): errno \(errno)")
                }
                total += count
            }
        }
        return total
    }
}
