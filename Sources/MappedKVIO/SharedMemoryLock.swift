import CFutex
import Glibc

/// An inter-process lock that lives in a word of a small shared file mapping: a futex-based mutex
/// owned by a process, not a thread, with the same counting rules as ``FileLock``.
///
/// Uncontended, taking and releasing it is one atomic compare-and-swap and one atomic exchange,
/// with no system call; a `flock` pair costs two. A holder that dies without releasing it is found
/// by the next waiter (after one wait of ``ownerCheckInterval``, through ``ProcessIdentity``), which
/// takes the lock over and reports the lock state as changed, exactly as if a `flock` had been
/// released by the holder's death. The holder is a process, so a lock taken on one thread may be
/// released on another, as an `flock` may.
///
/// The file's layout (docs/FORMAT.md 6.6), little-endian, one page:
/// - bytes 0..<8: the magic `MKVLOCK1`;
/// - bytes 8..<16: the lock word: 0 when free, else the holder's ``ProcessIdentity`` word with
///   bit 0 set while another process may be waiting (the low half is the futex waiters sleep on);
/// - bytes 16..<24: a number the last holder chose when it opened the lock, written just before
///   it released the lock; a process that finds its own number there knows no other holder came
///   between its last release and its next acquisition;
/// - the rest is zero.
///
/// The invariant: the lock word is only ever changed by compare-and-swap from free to a holder,
/// from a dead holder to a live one, or by its holder (setting the waiters bit is done by a
/// compare-and-swap from the value seen), and only its holder sets it free.
///
/// Not thread-safe: the owner serializes calls, as for ``FileLock``. Within one process, two
/// instances on the same file block each other, like two descriptors of one `flock`ed file.
package final class SharedMemoryLock {
    /// The file's size.
    package static let fileSize = 4096
    /// The magic at the start of the file.
    package static let magic: [UInt8] = Array("MKVLOCK1".utf8)
    /// How long a waiter sleeps before it checks whether the holder is still running.
    package static let ownerCheckInterval: Int64 = 20_000_000

    /// The lock file's path.
    package let path: String

    /// Nested shared locks held.
    package var sharedCount: Int { sharedLevels }
    /// Nested exclusive locks held.
    package var exclusiveCount: Int { exclusiveLevels }
    // Every lock and unlock reads and writes the counts. They are private, so that the optimizer
    // sees every access and drops the dynamic exclusivity checks a class's stored `var` otherwise
    // pays on each one (they cost more than the atomic operations); the owner serializes calls.
    private var sharedLevels = 0
    private var exclusiveLevels = 0

    private let file: FileDescriptor
    private let region: MappedRegion
    private let word: UnsafeMutablePointer<UInt64>
    private let lastHolder: UnsafeMutablePointer<UInt64>
    private let identity = ProcessIdentity.current.word
    private let nonce: UInt64

    private init(file: FileDescriptor, region: MappedRegion) {
        self.path = file.path
        self.file = file
        self.region = region
        // The mapping is page-aligned and at least `fileSize` long (checked by `open`).
        let base = region.bytes.baseAddress.unsafelyUnwrapped
        word = (base + 8).assumingMemoryBound(to: UInt64.self)
        lastHolder = (base + 16).assumingMemoryBound(to: UInt64.self)
        var generator = SystemRandomNumberGenerator()
        nonce = generator.next() | 1
    }

    deinit {
        releaseAll()
        region.unmap()
        file.close()
    }

    /// Releases every level held, as closing a `flock`ed descriptor does: for an owner that closes
    /// the store while it may still hold the lock (after an I/O failure).
    package func releaseAll() {
        guard isHeld else { return }
        sharedLevels = 0
        exclusiveLevels = 0
        release()
    }

    /// Whether any lock is held.
    package var isHeld: Bool { sharedLevels > 0 || exclusiveLevels > 0 }

    /// Opens the lock file at `path`, creating it whole if it does not exist (written under a
    /// temporary name and linked into place, so no opener ever sees it half written).
    ///
    /// - Throws: ``SystemError``; `EINVAL` for a file that exists but is not a lock file.
    package static func open(_ path: String) throws(SystemError) -> SharedMemoryLock {
        if !Directory.fileExists(path) { try create(path) }
        let file = try FileDescriptor.open(path, access: .readWriteCreate)
        do throws(SystemError) {
            let header = try file.read(count: magic.count, at: 0)
            guard try file.size() >= fileSize, header == magic else {
                throw SystemError("open lock file (not a MappedKV lock file)", path: path, errno: EINVAL)
            }
            let region = try MappedRegion(file: file, length: fileSize, writable: true)
            return SharedMemoryLock(file: file, region: region)
        } catch {
            file.close()
            throw error
        }
    }

    private static func create(_ path: String) throws(SystemError) {
        let temporary = path + ".tmp-\(getpid())"
        try? FileDescriptor.remove(temporary)
        let file = try FileDescriptor.open(temporary, access: .createNew)
        defer {
            file.close()
            try? FileDescriptor.remove(temporary)
        }
        var page = [UInt8](repeating: 0, count: fileSize)
        page.replaceSubrange(0..<magic.count, with: magic)
        let written: SystemError? = page.withUnsafeBytes { bytes in
            do throws(SystemError) {
                try file.write(bytes, at: 0)
                return nil
            } catch {
                return error
            }
        }
        if let written { throw written }
        // link(2) fails if another opener created the file first; theirs is as good as ours.
        let result = link(temporary, path)
        if result != 0 && Glibc.errno != EEXIST { throw SystemError("link", path: path, errno: Glibc.errno) }
    }

    /// Takes the lock, waiting while another process holds it.
    ///
    /// - Returns: true if the lock state changed (a first acquisition) and another holder may have
    ///   written since this instance last released it: a different holder came between, or the
    ///   previous holder died holding it. Nested requests only count and return false.
    @discardableResult
    package func lock(_ kind: LockKind) throws(SystemError) -> Bool {
        if isHeld {
            count(kind, by: 1)
            return false
        }
        let ownerDied = cfutex_compare_exchange(word, 0, identity) == 0 && acquireContended()
        count(kind, by: 1)
        return ownerDied || cfutex_load(lastHolder) != nonce
    }

    /// Takes the exclusive lock only if no other process holds it (or its holder has died).
    ///
    /// - Returns: nil if the lock is busy; otherwise whether the lock state changed, as ``lock(_:)``.
    package func tryLockExclusive() throws(SystemError) -> Bool? {
        if isHeld {
            exclusiveLevels += 1
            return false
        }
        var ownerDied = false
        if cfutex_compare_exchange(word, 0, identity) == 0 {
            let current = cfutex_load(word)
            guard current != 0, !ProcessIdentity(word: current).isRunning,
                cfutex_compare_exchange(word, current, identity | 1) != 0
            else { return nil }
            ownerDied = true
        }
        exclusiveLevels = 1
        return ownerDied || cfutex_load(lastHolder) != nonce
    }

    /// Releases one level of `kind`; the lock is released when no level is left.
    package func unlock(_ kind: LockKind) throws(SystemError) {
        switch kind {
        case .shared: precondition(sharedLevels > 0, "unlocking a shared lock that is not held")
        case .exclusive: precondition(exclusiveLevels > 0, "unlocking an exclusive lock that is not held")
        }
        count(kind, by: -1)
        if !isHeld { release() }
    }

    private func count(_ kind: LockKind, by delta: Int) {
        switch kind {
        case .shared: sharedLevels += delta
        case .exclusive: exclusiveLevels += delta
        }
    }

    private func release() {
        cfutex_store(lastHolder, nonce)
        if cfutex_exchange(word, 0) & 1 != 0 { cfutex_wake(futexWord, 1) }
    }

    /// The lock word's low half, on which waiters sleep (little-endian).
    private var futexWord: UnsafeMutablePointer<UInt32> {
        UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self)
    }

    /// Waits for the lock after a failed first attempt; returns whether its holder had died.
    ///
    /// Once contended, the lock is taken with the waiters bit set, since others may still sleep.
    private func acquireContended() -> Bool {
        var spins = 0
        while true {
            var current = cfutex_load(word)
            if current == 0 {
                if cfutex_compare_exchange(word, 0, identity | 1) != 0 { return false }
                continue
            }
            if spins < 100 {
                spins += 1
                cfutex_pause()
                continue
            }
            if current & 1 == 0 {
                guard cfutex_compare_exchange(word, current, current | 1) != 0 else { continue }
                current |= 1
            }
            let result = cfutex_wait(futexWord, UInt32(truncatingIfNeeded: current), Self.ownerCheckInterval)
            if result == ETIMEDOUT, cfutex_load(word) == current, !ProcessIdentity(word: current).isRunning,
                cfutex_compare_exchange(word, current, identity | 1) != 0
            {
                return true
            }
        }
    }
}
