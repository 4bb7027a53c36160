import Glibc
import MappedKVIO

/// Copies a damaged store's files aside before a recovery changes them.
///
/// The copies are `<data file>.corrupt-<UTC time>` and the same name plus `.crc`, so the pair is
/// itself a store (ID `<id>.corrupt-<UTC time>`) that `mappedkv verify` and `dump` can read.
enum Quarantine {
    /// Copies both files, flushed to disk with their names, and returns their paths (data file first).
    ///
    /// A second recovery within the same second gets a `-2`, `-3`, ... suffix; existing files
    /// are never overwritten.
    static func copy(_ files: StoreFiles) throws(MappedKVError) -> [String] {
        let stamp = utcStamp()
        for attempt in 1...100 {
            let base = files.location.dataPath + ".corrupt-" + stamp + (attempt == 1 ? "" : "-\(attempt)")
            let metaCopy = base + ".crc"
            guard !Directory.fileExists(base), !Directory.fileExists(metaCopy) else { continue }
            do {
                try write(files.dataFileBytes, to: base)
                try write(files.metaFileBytes, to: metaCopy)
                // The recovery rewrites the store next: the copies must keep their names first.
                try Directory.synchronize(files.location.fileDirectory)
            } catch {
                if error.errno == EEXIST { continue }
                throw .system(SystemCallError(error))
            }
            return [base, metaCopy]
        }
        throw .invalidArgument("could not find a free name for a copy of the damaged files of '\(files.location.id)'")
    }

    private static func write(_ bytes: UnsafeRawBufferPointer, to path: String) throws(SystemError) {
        let file = try FileDescriptor.open(path, access: .createNew)
        defer { file.close() }
        if !bytes.isEmpty { try file.write(bytes, at: 0) }
        try file.synchronize()
    }

    /// The current time as `YYYYMMDDTHHMMSSZ`.
    static func utcStamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}
