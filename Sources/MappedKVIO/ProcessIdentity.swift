import Glibc

/// A process told apart from any later process that reuses its ID: its process ID and its start
/// time in clock ticks since boot (field 22 of `/proc/<pid>/stat`), packed into the 63 high bits
/// of a word whose lowest bit is left free.
///
/// The shared-memory lock (``SharedMemoryLock``) stores the holder's identity in its lock word, so
/// that a waiter can tell a holder that is still running from one that died (killed, crashed)
/// without releasing it. Processes that share a lock must see one PID namespace.
package struct ProcessIdentity: Equatable, Sendable {
    /// The packed form: process ID in bits 32...63, start time (low 31 bits) in bits 1...31, bit 0 clear.
    package let word: UInt64

    /// The identity held in a lock word (its lowest bit ignored).
    package init(word: UInt64) { self.word = word & ~1 }

    /// Packs a process ID and start time.
    package init(processID: Int32, startTime: UInt64) {
        word = UInt64(UInt32(bitPattern: processID)) << 32 | (startTime & 0x7FFF_FFFF) << 1
    }

    /// The process ID.
    package var processID: Int32 { Int32(bitPattern: UInt32(truncatingIfNeeded: word >> 32)) }

    /// This process, read once. A child made by `fork` without `exec` inherits its parent's value,
    /// so such a child must not take locks that its parent's identity may hold.
    package static let current: ProcessIdentity = {
        let id = getpid()
        return ProcessIdentity(processID: id, startTime: startTime(of: id) ?? 0)
    }()

    /// Whether the process this identity names is still running: false when no process has its
    /// ID, the one that has it started at another time (the ID was reused), or it is a zombie
    /// (all its threads have exited and it only waits for its parent to reap it).
    package var isRunning: Bool {
        let id = processID
        // This process's ID: running if the identity is this process's, not an earlier holder of the ID.
        if id == ProcessIdentity.current.processID { return self == ProcessIdentity.current }
        guard let status = Self.status(of: id) else {
            // No readable /proc entry: ask the kernel whether the ID exists at all.
            return kill(id, 0) == 0 || Glibc.errno != ESRCH
        }
        if status.state == UInt8(ascii: "Z") || status.state == UInt8(ascii: "X") {
            // The leader thread's state: a process whose main thread exited while others run
            // shows Z too, but still lists those threads.
            return ((try? Directory.entries("/proc/\(id)/task")) ?? []).count > 1
        }
        return ProcessIdentity(processID: id, startTime: status.startTime) == self
    }

    /// The start time of process `id` in clock ticks since boot, or nil if it cannot be read.
    package static func startTime(of id: Int32) -> UInt64? { status(of: id)?.startTime }

    /// The state letter and start time from `/proc/<id>/stat`, or nil if it cannot be read.
    static func status(of id: Int32) -> (state: UInt8, startTime: UInt64)? {
        guard let file = try? FileDescriptor.open("/proc/\(id)/stat", access: .readOnly) else { return nil }
        defer { file.close() }
        guard let buffer = try? file.read(count: 1024, at: 0), !buffer.isEmpty else { return nil }
        let count = buffer.count
        // "pid (comm) state ppid ...": the command may hold spaces and parentheses, so the
        // fields are counted from the last ')'.
        guard let close = buffer[..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = buffer[(close + 1)..<count].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
        guard fields.count > 19, let state = fields[0].first,
            let start = UInt64(String(decoding: fields[19], as: UTF8.self))
        else { return nil }
        return (state, start)
    }
}
