// Events the disk cache's background work gives off, for tests to wait on instead of waiting a
// fixed time: the end of a task, and the closes of a file it opened (inotify).
import Glibc
import Synchronization

/// Whether `task` ends within `seconds`. Watched from another task, so one that never ends fails
/// the caller's expectation instead of hanging the test.
func ends(_ task: Task<Void, Never>, within seconds: Double) async throws -> Bool {
    let ended = DiskTaskEnd()
    let watcher = Task {
        await task.value
        ended.mark()
    }
    defer { watcher.cancel() }
    return try await eventually(within: seconds) { ended.isMarked }
}

/// Set once, when a watched task has ended.
final class DiskTaskEnd: Sendable {
    private let flag = Atomic<Bool>(false)
    var isMarked: Bool { flag.load(ordering: .acquiring) }
    func mark() { flag.store(true, ordering: .releasing) }
}

/// Counts the closes of a file by whoever opened it for writing (inotify's `IN_CLOSE_WRITE`), so
/// a test sees code open and close it: the background trim opens `trim.lock` on every turn and
/// closes it when the turn ends, skipped or not.
final class DiskFileCloses {
    private let descriptor: Int32
    private var seen = 0

    /// Watches `path`, which must exist.
    init(_ path: String) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw DiskEventError("inotify_init1: errno \(errno)") }
        guard inotify_add_watch(descriptor, path, UInt32(IN_CLOSE_WRITE)) >= 0 else {
            close(descriptor)
            throw DiskEventError("inotify_add_watch \(path): errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    /// The closes seen so far, reading those that arrived since the last call.
    var count: Int {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let length = read(descriptor, &buffer, buffer.count)
            guard length > 0 else { return seen }
            // struct inotify_event: wd (Int32), mask, cookie, len (UInt32 each), then len name bytes.
            var offset = 0
            while offset + 16 <= length {
                let (mask, nameLength) = buffer.withUnsafeBytes { raw in
                    (
                        raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
                    )
                }
                if mask & UInt32(IN_CLOSE_WRITE) != 0 { seen += 1 }
                offset += 16 + Int(nameLength)
            }
        }
    }
}

struct DiskEventError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
