import MappedKVFormat
import MappedKVIO

/// Whole files read and written byte for byte, with system errors that name the file.
enum BinaryFile {
    /// How much is read per call.
    private static let chunk = 1 << 20

    /// The bytes of the file at `path`, read to its end (so a pipe or a growing file works too).
    static func read(_ path: String) throws(SystemError) -> [UInt8] {
        let file = try FileDescriptor.open(path, access: .readOnly)
        defer { file.close() }
        var bytes: [UInt8] = []
        while true {
            let part = try file.read(count: chunk, at: bytes.count)
            bytes += part
            if part.count < chunk { return bytes }
        }
    }

    /// Replaces the file at `path` with `bytes` (creating it).
    static func write(_ bytes: [UInt8], to path: String) throws(SystemError) {
        let file = try FileDescriptor.open(path, access: .writeTruncate)
        defer { file.close() }
        try bytes.withRawBytes { (raw) throws(SystemError) in try file.write(raw, at: 0) }
    }
}
