// Proves FileLock's protocol against a real second process (flock(1) from util-linux, started with
// posix_spawnp): what this process holds is exactly what another process is refused, through nested
// levels, the shared -> exclusive upgrade (including the non-atomic fallback when another process shares
// the lock), the downgrade to shared when the last exclusive level goes, and tryLockExclusive answering
// nil while another process holds the lock, keeping a shared lock it already had.

import Foundation
import Glibc
import MappedKVIO
import Testing

/// A file to lock, opened read-write, and a FileLock on it.
private func lockedFile(_ directory: TemporaryDirectory) throws -> (path: String, file: FileDescriptor, lock: FileLock)
{
    let path = directory.file("lock")
    let file = try FileDescriptor.open(path, access: .readWriteCreate)
    return (path, file, FileLock(file))
}

/// What another process may take right now: (shared, exclusive).
private func othersMay(_ path: String) throws -> (shared: Bool, exclusive: Bool) {
    (try OtherProcess.canFlock(path, .shared), try OtherProcess.canFlock(path, .exclusive))
}

@Suite("FileLock between two processes", .timeLimit(.minutes(2)))
struct FileLockProcessTests {
    @Test("the probes see a free file as free (the baseline every other answer is read against)")
    func freeFile() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            #expect(!lock.isHeld)
            #expect(try othersMay(path) == (true, true))
        }
    }

    @Test("a shared lock admits other readers and refuses a writer; nested levels only count")
    func sharedLevels() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            #expect(try lock.lock(.shared) == true)
            #expect(try lock.lock(.shared) == false)
            #expect(lock.sharedCount == 2)
            #expect(try othersMay(path) == (true, false))
            try lock.unlock(.shared)
            #expect(lock.sharedCount == 1)
            #expect(try othersMay(path) == (true, false))
            try lock.unlock(.shared)
            #expect(!lock.isHeld)
            #expect(try othersMay(path) == (true, true))
        }
    }

    @Test("an exclusive lock refuses everyone until its last nested level is released")
    func exclusiveLevels() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            #expect(try lock.lock(.exclusive) == true)
            #expect(try lock.lock(.exclusive) == false)
            #expect(lock.exclusiveCount == 2)
            #expect(try othersMay(path) == (false, false))
            try lock.unlock(.exclusive)
            #expect(lock.exclusiveCount == 1)
            #expect(try othersMay(path) == (false, false))
            try lock.unlock(.exclusive)
            #expect(!lock.isHeld)
            #expect(try othersMay(path) == (true, true))
        }
    }

    @Test("shared -> exclusive is an upgrade that reports a change; releasing it downgrades to shared")
    func upgradeAndDowngrade() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            try lock.lock(.shared)
            #expect(try lock.lock(.exclusive) == true)
            #expect((lock.sharedCount, lock.exclusiveCount) == (1, 1))
            #expect(try othersMay(path) == (false, false))
            try lock.unlock(.exclusive)
            #expect((lock.sharedCount, lock.exclusiveCount) == (1, 0))
            #expect(try othersMay(path) == (true, false))
            try lock.unlock(.shared)
            #expect(try othersMay(path) == (true, true))
        }
    }

    @Test("a shared level taken inside an exclusive lock keeps the file shared after the exclusive goes")
    func sharedInsideExclusive() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            try lock.lock(.exclusive)
            #expect(try lock.lock(.shared) == false)
            #expect((lock.sharedCount, lock.exclusiveCount) == (1, 1))
            #expect(try othersMay(path) == (false, false))
            try lock.unlock(.exclusive)
            #expect(try othersMay(path) == (true, false))
            try lock.unlock(.shared)
            #expect(try othersMay(path) == (true, true))
        }
    }

    @Test("releasing the shared level first leaves the exclusive lock whole")
    func sharedReleasedFirst() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            try lock.lock(.shared)
            try lock.lock(.exclusive)
            try lock.unlock(.shared)
            #expect((lock.sharedCount, lock.exclusiveCount) == (0, 1))
            #expect(try othersMay(path) == (false, false))
            try lock.unlock(.exclusive)
            #expect(try othersMay(path) == (true, true))
        }
    }

    @Test("tryLockExclusive takes a free lock, then only counts")
    func tryLockFree() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            #expect(try lock.tryLockExclusive() == true)
            #expect(try lock.tryLockExclusive() == false)
            #expect(lock.exclusiveCount == 2)
            #expect(try othersMay(path) == (false, false))
            try lock.unlock(.exclusive)
            try lock.unlock(.exclusive)
            #expect(try othersMay(path) == (true, true))
        }
    }

    @Test(
        "tryLockExclusive answers nil while another process holds the lock", arguments: [LockKind.shared, .exclusive])
    func tryLockBusy(held: LockKind) throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            let holder = try OtherProcess.holdFlock(path, held)
            defer { holder.release() }
            #expect(try lock.tryLockExclusive() == nil)
            #expect(!lock.isHeld)
            #expect(holder.release() == .exited(0))
            #expect(try lock.tryLockExclusive() == true)
            #expect(try othersMay(path) == (false, false))
            try lock.unlock(.exclusive)
        }
    }

    @Test("a failed tryLockExclusive keeps the shared lock this process already held")
    func tryLockBusyKeepsShared() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            try lock.lock(.shared)
            let holder = try OtherProcess.holdFlock(path, .shared)
            defer { holder.release() }
            #expect(try lock.tryLockExclusive() == nil)
            #expect((lock.sharedCount, lock.exclusiveCount) == (1, 0))
            #expect(holder.release() == .exited(0))
            // Linux drops a shared flock whose conversion failed; FileLock must have taken it back.
            #expect(try othersMay(path) == (true, false))
            try lock.unlock(.shared)
            #expect(try othersMay(path) == (true, true))
        }
    }

    @Test("another process's exclusive lock keeps a shared lock() blocked until it lets go")
    func sharedLockWaitsForWriter() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            let holder = try OtherProcess.holdFlock(path, .exclusive)
            defer { holder.release() }
            let shared = Handoff(value: lock)
            let call = try BackgroundCall { Result { () throws(SystemError) in try shared.value.lock(.shared) } }
            try call.waitUntilBlocked(in: flockSystemCall)
            #expect(!call.isFinished)
            #expect(holder.release() == .exited(0))
            #expect(try call.join().get() == true)
            #expect(lock.sharedCount == 1)
            #expect(try othersMay(path) == (true, false))
            try lock.unlock(.shared)
        }
    }

    @Test("upgrading while another process shares the lock blocks, then completes once it lets go")
    func upgradeWaitsForOtherReader() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            try lock.lock(.shared)
            let holder = try OtherProcess.holdFlock(path, .shared)
            defer { holder.release() }
            let shared = Handoff(value: lock)
            let call = try BackgroundCall { Result { () throws(SystemError) in try shared.value.lock(.exclusive) } }
            try call.waitUntilBlocked(in: flockSystemCall)
            #expect(!call.isFinished)
            // The upgrade is not atomic: while it waits, this process holds no granted lock on the file.
            #expect(try grantedLocks(onInodeOf: file) == 0)
            #expect(holder.release() == .exited(0))
            #expect(try call.join().get() == true)
            #expect((lock.sharedCount, lock.exclusiveCount) == (1, 1))
            #expect(try grantedLocks(onInodeOf: file) == 1)
            #expect(try othersMay(path) == (false, false))
            try lock.unlock(.exclusive)
            #expect(try othersMay(path) == (true, false))
            try lock.unlock(.shared)
        }
    }

    @Test("two descriptors of one file in one process exclude each other (flock is per open file)")
    func sameProcessTwoDescriptors() throws {
        try TemporaryDirectory.with { directory in
            let (path, file, lock) = try lockedFile(directory)
            defer { file.close() }
            let second = try FileDescriptor.open(path, access: .readOnly)
            defer { second.close() }
            let other = FileLock(second)
            try lock.lock(.shared)
            #expect(try other.tryLockExclusive() == nil)
            #expect(try other.lock(.shared) == true)
            try other.unlock(.shared)
            try lock.unlock(.shared)
            #expect(try other.tryLockExclusive() == true)
            try other.unlock(.exclusive)
        }
    }
}

/// Granted (not pending) flock locks this process holds on `file`'s inode, from /proc/locks. Lines read
/// `1: FLOCK  ADVISORY  READ 1234 08:01:5678 0 EOF`; a pending request has `->` after the number.
private func grantedLocks(onInodeOf file: FileDescriptor) throws -> Int {
    let identity = try FileIdentity(file)
    // Read to the end: /proc files report a size of 0, and a whole-file read of one stops after
    // its first page, which the locks of tests running beside this one can fill.
    guard let handle = FileHandle(forReadingAtPath: "/proc/locks") else { return 0 }
    let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    return text.split(separator: "\n").filter { line in
        let fields = line.split(separator: " ")
        guard fields.count >= 6, fields[1] == "FLOCK" else { return false }
        return fields[4] == "\(getpid())" && fields[5].hasSuffix(":\(identity.inode)")
    }.count
}
