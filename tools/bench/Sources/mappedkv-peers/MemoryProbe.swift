import Foundation
import MappedKV

/// Resident memory of a loaded store, measured in a child process (this executable again, with
/// the hidden `--rss-probe` option): the parent holds the benchmark's key arrays and the heap left
/// by earlier stores, so its own VmRSS would not give a clean figure. The child warms up the
/// runtime and the store code on a tiny store, reads `/proc/self/status`, opens the store (a full
/// load), reads it again and prints the difference, and the resident part of its mappings of the
/// store's two files (from `/proc/self/smaps`): `RssFile` also counts code pages first touched.
enum MemoryProbe {
    /// The child's side: prints `total<TAB>anonymous<TAB>file<TAB>storeFiles<TAB>keys` (kB except keys).
    static func runChild(directory: String, id: String) throws {
        let warmupDirectory = try Scratch.directory("\(directory)-probe-warmup")
        let warmup = try MappedKV(id: "warmup", directory: warmupDirectory)
        try warmup.set(Int32(1), forKey: "int-1")
        warmup.close()
        let reopened = try MappedKV(id: "warmup", directory: warmupDirectory)
        _ = try reopened.count
        reopened.close()
        try Scratch.remove(warmupDirectory)

        let before = try ResidentMemory.current()
        let store = try MappedKV(id: id, directory: directory)
        let keys = try store.count
        let after = try ResidentMemory.current()
        let delta = after - before
        let storeFiles = try ResidentMemory.mappedKiB(ofFilesWithPrefix: "\(canonical(directory))/\(id)")
        print("\(delta.total)\t\(delta.anonymous)\t\(delta.file)\t\(storeFiles)\t\(keys)")
        store.close()
    }

    /// The path as the kernel reports it in `/proc/self/smaps` (symbolic links resolved).
    private static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The parent's side: runs the child on the (closed) store `id` in `directory`.
    static func measure(directory: String, id: String) throws -> (memory: ResidentMemory, storeFilesKiB: Int, keys: Int)
    {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: executable)
        child.arguments = ["--rss-probe", directory, "--rss-probe-id", id]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        guard child.terminationStatus == 0 else {
            throw BenchError("the memory probe exited with status \(child.terminationStatus)")
        }
        let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard fields.count == 5 else {
            throw BenchError("the memory probe printed \(String(decoding: data, as: UTF8.self).debugDescription)")
        }
        return (ResidentMemory(total: fields[0], anonymous: fields[1], file: fields[2]), fields[3], fields[4])
    }
}
