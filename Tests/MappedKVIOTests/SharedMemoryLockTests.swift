// Proves SharedMemoryLock's rules inside one process (two instances on one file block each other,
// as two descriptors of a flocked file do) and its take-over of a dead holder, with real processes
// whose identities are written into the lock word: a reaped child (no such process), a zombie (exited,
// not yet reaped) and a live child under a wrong start time (a reused process ID) are dead; a live
// child under its own identity holds the lock.

import Foundation
import Glibc
import MappedKVIO
import Synchronization
import Testing

/// futex(2)'s system call number (not imported into Swift).
#if arch(x86_64)
private let futexSystemCall = 202
#else
private let futexSystemCall = 98
#endif

/// A flag shared with a background thread.
private final class Flag: Sendable {
    let value = Mutex(false)
}

/// The lock word's offset in the file.
private let lockWordOffset = 8

/// Writes `word` into the lock word of the file at `path`, as a holder that never released it would leave it.
private func plantHolder(_ word: UInt64, in path: String) throws {
    let file = try FileDescriptor.open(path, access: .readWriteCreate)
    defer { file.close() }
    try write(withUnsafeBytes(of: word.littleEndian) { Array($0) }, to: file, at: lockWordOffset)
}

/// The state letter of process `pid` (field 3 of /proc/<pid>/stat), or nil if it cannot be read.
private func processState(_ pid: pid_t) -> String? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    return text[text.index(after: close)...].split(separator: " ").first.map(String.init)
}

/// The lock word of the file at `path`.
private func lockWord(_ path: String) throws -> UInt64 {
    let file = try FileDescriptor.open(path, access: .readOnly)
    defer { file.close() }
    let bytes = try file.read(count: 8, at: lockWordOffset)
    return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
}

@Suite("SharedMemoryLock", .timeLimit(.minutes(2)))
struct SharedMemoryLockTests {
    @Test("a new lock file is free; nested levels count; the word names this process while held")
    func levels() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("store.lock")
            let lock = try SharedMemoryLock.open(path)
            #expect(try lockWord(path) == 0)
            #expect(try lock.lock(.exclusive) == true)
            #expect(try lock.lock(.shared) == false)
            #expect(try lock.lock(.exclusive) == false)
            #expect((lock.sharedCount, lock.exclusiveCount) == (1, 2))
            #expect(ProcessIdentity(word: try lockWord(path)) == ProcessIdentity.current)
            try lock.unlock(.exclusive)
            try lock.unlock(.shared)
            #expect(try lockWord(path) != 0)
            try lock.unlock(.exclusive)
            #expect(!lock.isHeld)
            #expect(try lockWord(path) == 0)
        }
    }

    @Test("the state is reported changed only when another holder came between two acquisitions")
    func changeReports() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("store.lock")
            let first = try SharedMemoryLock.open(path)
            let second = try SharedMemoryLock.open(path)
            #expect(try first.lock(.exclusive) == true)
            try first.unlock(.exclusive)
            #expect(try first.lock(.shared) == false, "nobody came between")
            try first.unlock(.shared)
            #expect(try second.lock(.exclusive) == true)
            try second.unlock(.exclusive)
            #expect(try first.lock(.exclusive) == true, "the second instance held it in between")
            try first.unlock(.exclusive)
        }
    }

    @Test("a held lock refuses another instance's try-lock, and a waiter gets it once it is released")
    func exclusion() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("store.lock")
            let first = try SharedMemoryLock.open(path)
            let second = try SharedMemoryLock.open(path)
            try first.lock(.shared)
            #expect(try second.tryLockExclusive() == nil)
            #expect(!second.isHeld)
            // A thread blocks in lock(); it can only return once the first instance lets go.
            let released = Flag()
            let handoff = Handoff(value: second)
            let waiter = try BackgroundCall { () -> Bool in
                let changed = (try? handoff.value.lock(.exclusive)) ?? false
                let afterRelease = released.value.withLock { $0 }
                try? handoff.value.unlock(.exclusive)
                return changed && afterRelease
            }
            try waiter.waitUntilBlocked(in: futexSystemCall)
            #expect(try lockWord(path) & 1 == 1, "the waiter marked the lock contended")
            released.value.withLock { $0 = true }
            try first.unlock(.shared)
            #expect(try waiter.join(), "acquired only after the release, and reported changed")
            #expect(try lockWord(path) == 0)
            #expect(try first.tryLockExclusive() == true)
            try first.unlock(.exclusive)
        }
    }

    @Test("a lock left by a process that is gone is taken over and reported changed")
    func goneHolder() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("store.lock")
            let lock = try SharedMemoryLock.open(path)
            let child = try ChildProcess(["true"])
            #expect(child.wait() == .exited(0))
            try plantHolder(ProcessIdentity(processID: child.pid, startTime: 12345).word | 1, in: path)
            #expect(try lock.lock(.exclusive) == true)
            #expect(ProcessIdentity(word: try lockWord(path)) == ProcessIdentity.current)
            try lock.unlock(.exclusive)
            try plantHolder(ProcessIdentity(processID: child.pid, startTime: 12345).word, in: path)
            #expect(try lock.tryLockExclusive() == true)
            try lock.unlock(.exclusive)
        }
    }

    @Test("a zombie holder is dead; a live one is not, unless its start time says its ID was reused")
    func liveness() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("store.lock")
            let lock = try SharedMemoryLock.open(path)

            let sleeper = try ChildProcess(["sleep", "60"])
            let start = try #require(ProcessIdentity.startTime(of: sleeper.pid))
            let live = ProcessIdentity(processID: sleeper.pid, startTime: start)
            #expect(live.isRunning)
            try plantHolder(live.word, in: path)
            #expect(try lock.tryLockExclusive() == nil, "a live holder keeps the lock")
            let reused = ProcessIdentity(processID: sleeper.pid, startTime: start + 1)
            #expect(!reused.isRunning)
            try plantHolder(reused.word, in: path)
            #expect(try lock.tryLockExclusive() == true, "an ID reused by a later process is not the holder")
            try lock.unlock(.exclusive)
            kill(sleeper.pid, SIGKILL)
            sleeper.wait()

            // Exited but not reaped: a zombie, whose /proc entry stays until the wait.
            let zombie = try ChildProcess(["true"])
            let zombieStart = try #require(ProcessIdentity.startTime(of: zombie.pid))
            try waitUntil("the child has exited") {
                var info = siginfo_t()
                let found = waitid(P_PID, id_t(zombie.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0
                return found && info._sifields._sigchld.si_pid == zombie.pid
            }
            let dead = ProcessIdentity(processID: zombie.pid, startTime: zombieStart)
            #expect(!dead.isRunning)
            try plantHolder(dead.word, in: path)
            #expect(try lock.tryLockExclusive() == true)
            try lock.unlock(.exclusive)
            zombie.wait()
        }
    }

    @Test("a process whose main thread exited while another thread runs still holds the lock")
    func leaderExitedEarly() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("store.lock")
            let lock = try SharedMemoryLock.open(path)
            // The main thread ends with pthread_exit; a second thread lives until its input closes.
            let script = """
                import ctypes, sys, threading
                threading.Thread(target=sys.stdin.read).start()
                ctypes.CDLL(None).pthread_exit(None)
                """
            let child = try ChildProcess(["python3", "-c", script], connected: true)
            let start = try #require(ProcessIdentity.startTime(of: child.pid))
            try waitUntil("the child's main thread has exited") { processState(child.pid) == "Z" }
            let holder = ProcessIdentity(processID: child.pid, startTime: start)
            #expect(holder.isRunning, "a zombie main thread with a live thread is a running process")
            try plantHolder(holder.word, in: path)
            #expect(try lock.tryLockExclusive() == nil)
            child.closeChannel()
            try waitUntil("the child has ended") { !holder.isRunning }
            #expect(try lock.tryLockExclusive() == true)
            try lock.unlock(.exclusive)
            #expect(child.wait() == .exited(0))
        }
    }

    @Test("a file that is not a lock file is refused, not used")
    func foreignFile() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("store.lock")
            try makeFile(path, pattern(SharedMemoryLock.fileSize))
            #expect(throws: SystemError.self) { try SharedMemoryLock.open(path) }
            try makeFile(path, Array("MKVLOCK1".utf8))
            let error = #expect(throws: SystemError.self) { try SharedMemoryLock.open(path) }
            #expect(error?.errno == EINVAL)
            #expect(try FileDescriptor.open(path, access: .readOnly).size() == 8, "the file is left as it was")
        }
    }
}
