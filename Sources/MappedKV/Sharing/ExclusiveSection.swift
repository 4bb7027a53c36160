import Glibc
import Synchronization

// Exclusive sections: ``MappedKV/withExclusiveLock(_:)``, its try and async forms, and the
// ``MappedKV/ExclusiveLock`` guard.
//
// The invariant: while a thread holds a store's exclusive section, no other thread of this process
// runs a call on that store (it waits for the section to end), no other process holds the store's
// `flock` (in multi-process mode the section holds it exclusively), and the holding thread's own
// calls are served. Sections nest on their thread: only the outermost one takes and releases.
// (`isEncrypted`, `isKeyExpiryEnabled` and `checkForChanges()` take the mutex directly: they read a
// flag, or catch up with files no other process can change while the section holds the `flock`.)
//
// The store's `Mutex<StoreCore>` is held only for the length of one call, never across a section
// (a Swift `Mutex` is neither recursive nor holdable across calls). The section is instead:
// - a gate, a semaphore of one, taken for the whole outermost section; calls from other threads
//   that find a section open wait for it (``SharedStore/waitForSectionToEnd()``), then check again;
// - the holder's thread, an atomic written only under the store's mutex, so a call that reads it
//   under the mutex sees every section that began before it (``ExclusiveSection/admitsCurrentThread()``);
// - a nesting depth, touched only by the holding thread.
// It lives inline in the `SharedStore`, so a call checks it without reference counting.
// A call finds no section open in the steady state: one relaxed load under the mutex it already takes.

/// Who holds a store's exclusive section, and the gate other threads wait at. Stored inline in its
/// ``SharedStore``, so checking it costs no reference counting.
struct ExclusiveSection: ~Copyable, @unchecked Sendable {  // the gate is a semaphore, made for threads
    /// The holding thread (`pthread_self`), or 0.
    private let holder = Atomic<UInt>(0)
    /// Nested sections the holding thread is in; only that thread touches it.
    private let depth = Atomic<Int>(0)
    /// A semaphore of one, taken by the outermost section and by calls waiting for one to end.
    private let gate: UnsafeMutablePointer<sem_t>

    init() {
        gate = .allocate(capacity: 1)
        sem_init(gate, 0, 1)
    }

    deinit {
        sem_destroy(gate)
        gate.deallocate()
    }

    /// The calling thread, as ``holder`` records it.
    static var currentThread: UInt { UInt(pthread_self()) }

    /// Whether a call on this thread may touch the store now: no section is open, or this thread
    /// holds it. Read under the store's mutex, which orders it after every section's start.
    func admitsCurrentThread() -> Bool {
        let holder = holder.load(ordering: .relaxed)
        return holder == 0 || holder == Self.currentThread
    }

    /// Whether the calling thread holds the section.
    var isHeldByCurrentThread: Bool { holder.load(ordering: .relaxed) == Self.currentThread }

    /// Records the calling thread as the holder (under the store's mutex, after the gate).
    func claim() {
        holder.store(Self.currentThread, ordering: .relaxed)
        depth.store(1, ordering: .relaxed)
    }

    /// Records that nobody holds the section (under the store's mutex, before opening the gate).
    func vacate() { holder.store(0, ordering: .relaxed) }

    /// Enters a section nested in the one this thread holds.
    func nest() { depth.add(1, ordering: .relaxed) }

    /// Leaves one level of this thread's section; true when it was the outermost.
    func unnest() -> Bool { depth.subtract(1, ordering: .relaxed).newValue == 0 }

    /// Waits for the gate.
    ///
    /// - Precondition: `sem_wait` on this section's own semaphore fails only when interrupted
    ///   (`EINTR`, retried); its other error, `EINVAL`, would mean the semaphore was destroyed while
    ///   in use, a bug in this package rather than a runtime condition.
    func closeGate() {
        while sem_wait(gate) != 0 { precondition(errno == EINTR, "sem_wait failed: \(errno)") }
    }

    /// Takes the gate if nobody has it; false otherwise.
    func tryCloseGate() -> Bool { sem_trywait(gate) == 0 }

    /// Gives the gate back.
    func openGate() { sem_post(gate) }
}

extension SharedStore {
    /// How to wait for an exclusive section.
    enum SectionWait {
        /// Wait for other threads and processes.
        case block
        /// Return false at once if another thread or process holds it; wait only for the store's
        /// mutex, which calls hold briefly.
        case tryOnce
        /// As `tryOnce`, and return false rather than wait for the store's mutex either: for a
        /// caller on Swift's cooperative thread pool, which must never block.
        case tryWithoutBlocking
    }

    /// Begins an exclusive section on the calling thread, or nests one in the section it holds;
    /// false if `wait` is not ``SectionWait/block`` and another thread or process holds it.
    /// Every true must be matched by one ``endExclusiveSection()`` on the same thread.
    func beginExclusiveSection(_ wait: SectionWait) throws(MappedKVError) -> Bool {
        if section.isHeldByCurrentThread {
            section.nest()
            return true
        }
        if wait == .block {
            section.closeGate()
        } else if !section.tryCloseGate() {
            return false
        }
        let begin = { (core: StoreCore) throws(MappedKVError) -> Bool in
            guard try core.beginExclusiveSection(blocking: wait == .block) else { return false }
            self.section.claim()
            return true
        }
        let begun: Bool
        do throws(MappedKVError) {
            if wait == .tryWithoutBlocking {
                begun =
                    try core.withLockIfAvailable { (core) throws(MappedKVError) -> Bool in try begin(core) } ?? false
            } else {
                begun = try core.withLock { (core) throws(MappedKVError) -> Bool in try begin(core) }
            }
        } catch {
            section.openGate()
            throw error
        }
        if !begun { section.openGate() }
        return begun
    }

    /// Ends one level of the calling thread's section; the outermost releases the lock and the gate.
    func endExclusiveSection() {
        guard section.unnest() else { return }
        core.withLock { core in
            core.endExclusiveSection()
            self.section.vacate()
        }
        section.openGate()
    }

    /// Runs `body` on the store under its mutex, unless another thread holds the exclusive
    /// section: then it returns nil without running it. One relaxed load in the steady state.
    func withCoreUnlessSectionHeldElsewhere<R: Sendable>(
        _ body: (StoreCore) throws(MappedKVError) -> R
    ) throws(MappedKVError) -> R? {
        try core.withLock { (core) throws(MappedKVError) -> R? in
            guard section.admitsCurrentThread() else { return nil }
            return try body(core)
        }
    }

    /// Waits until the section another thread holds has ended: the path of a call that found one
    /// open, which then checks again under the mutex (a new section may have begun meanwhile).
    @inline(never)
    func waitForSectionToEnd() {
        section.closeGate()
        section.openGate()
    }
}
