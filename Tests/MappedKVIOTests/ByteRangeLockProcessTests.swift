// Proves ByteRangeLock's OFD byte-range locks against a real second process (python3's fcntl with
// F_OFD_SETLK): shared ranges are shared, exclusive ranges exclude, only overlapping bytes conflict,
// a lock held elsewhere makes tryLock answer false, the lock dies with its descriptor, it does not
// interact with flock, two descriptors in one process conflict like two processes, and errors other
// than "busy" are thrown.

import Glibc
import MappedKVIO
import Testing

/// A file of 16 bytes to lock, opened read-write.
private func lockFile(_ directory: TemporaryDirectory) throws -> (path: String, file: FileDescriptor) {
    let path = directory.file("crc")
    try makeFile(path, pattern(16))
    return (path, try FileDescriptor.open(path, access: .readWriteCreate))
}

@Suite("ByteRangeLock between two processes", .timeLimit(.minutes(2)))
struct ByteRangeLockProcessTests {
    @Test("an exclusive lock on byte 1 refuses both kinds on byte 1 only")
    func exclusiveRange() throws {
        try TemporaryDirectory.with { directory in
            let (path, file) = try lockFile(directory)
            defer { file.close() }
            #expect(try OtherProcess.canLockRange(path, offset: 1, length: 1, .exclusive))
            #expect(try ByteRangeLock.tryLock(file, offset: 1, length: 1, kind: .exclusive))
            #expect(try !OtherProcess.canLockRange(path, offset: 1, length: 1, .shared))
            #expect(try !OtherProcess.canLockRange(path, offset: 1, length: 1, .exclusive))
            #expect(try !OtherProcess.canLockRange(path, offset: 0, length: 2, .shared))
            #expect(try OtherProcess.canLockRange(path, offset: 0, length: 1, .exclusive))
            #expect(try OtherProcess.canLockRange(path, offset: 2, length: 1, .exclusive))
        }
    }

    @Test("a shared lock admits other readers and refuses writers")
    func sharedRange() throws {
        try TemporaryDirectory.with { directory in
            let (path, file) = try lockFile(directory)
            defer { file.close() }
            #expect(try ByteRangeLock.tryLock(file, offset: 1, length: 1, kind: .shared))
            #expect(try OtherProcess.canLockRange(path, offset: 1, length: 1, .shared))
            #expect(try !OtherProcess.canLockRange(path, offset: 1, length: 1, .exclusive))
        }
    }

    @Test(
        "tryLock answers false while another process holds a conflicting range",
        arguments: [LockKind.shared, .exclusive])
    func heldElsewhere(held: LockKind) throws {
        try TemporaryDirectory.with { directory in
            let (path, file) = try lockFile(directory)
            defer { file.close() }
            let holder = try OtherProcess.holdRange(path, offset: 1, length: 1, held)
            defer { holder.release() }
            #expect(try ByteRangeLock.tryLock(file, offset: 1, length: 1, kind: .exclusive) == false)
            #expect(try ByteRangeLock.tryLock(file, offset: 1, length: 1, kind: .shared) == (held == .shared))
            #expect(try ByteRangeLock.tryLock(file, offset: 2, length: 4, kind: .exclusive))
            #expect(holder.release() == .exited(0))
            #expect(try ByteRangeLock.tryLock(file, offset: 1, length: 1, kind: .exclusive))
            #expect(try !OtherProcess.canLockRange(path, offset: 1, length: 1, .shared))
        }
    }

    @Test("the lock belongs to the descriptor: closing it releases the range")
    func releasedOnClose() throws {
        try TemporaryDirectory.with { directory in
            let (path, file) = try lockFile(directory)
            #expect(try ByteRangeLock.tryLock(file, offset: 1, length: 1, kind: .exclusive))
            #expect(try !OtherProcess.canLockRange(path, offset: 1, length: 1, .shared))
            file.close()
            #expect(try OtherProcess.canLockRange(path, offset: 1, length: 1, .exclusive))
        }
    }

    @Test("byte-range locks and flock locks do not interact")
    func independentOfFlock() throws {
        try TemporaryDirectory.with { directory in
            let (path, file) = try lockFile(directory)
            defer { file.close() }
            let holder = try OtherProcess.holdFlock(path, .exclusive)
            defer { holder.release() }
            #expect(try ByteRangeLock.tryLock(file, offset: 1, length: 1, kind: .exclusive))
            #expect(try !OtherProcess.canLockRange(path, offset: 1, length: 1, .shared))
            #expect(holder.release() == .exited(0))
            // And the other way round: the range lock does not stop a flock.
            #expect(try OtherProcess.canFlock(path, .exclusive))
        }
    }

    @Test("two descriptors of one file in one process conflict; one descriptor converts its own lock")
    func sameProcess() throws {
        try TemporaryDirectory.with { directory in
            let (path, file) = try lockFile(directory)
            defer { file.close() }
            // Closed once, by hand: a second close could hit a descriptor another test just opened.
            let second = try FileDescriptor.open(path, access: .readWriteCreate)
            #expect(try ByteRangeLock.tryLock(file, offset: 1, length: 1, kind: .shared))
            #expect(try ByteRangeLock.tryLock(second, offset: 1, length: 1, kind: .shared))
            #expect(try ByteRangeLock.tryLock(second, offset: 1, length: 1, kind: .exclusive) == false)
            second.close()
            // With the other reader gone, the first descriptor upgrades its own range.
            #expect(try ByteRangeLock.tryLock(file, offset: 1, length: 1, kind: .exclusive))
            #expect(try !OtherProcess.canLockRange(path, offset: 1, length: 1, .shared))
        }
    }

    @Test("an exclusive range on a read-only descriptor throws EBADF, naming the call and the path")
    func otherErrorsThrow() throws {
        try TemporaryDirectory.with { directory in
            let (path, file) = try lockFile(directory)
            defer { file.close() }
            let reader = try FileDescriptor.open(path, access: .readOnly)
            defer { reader.close() }
            #expect(throws: SystemError("fcntl(F_OFD_SETLK)", path: path, errno: EBADF)) {
                _ = try ByteRangeLock.tryLock(reader, offset: 1, length: 1, kind: .exclusive)
            }
            #expect(try ByteRangeLock.tryLock(reader, offset: 1, length: 1, kind: .shared))
        }
    }
}
