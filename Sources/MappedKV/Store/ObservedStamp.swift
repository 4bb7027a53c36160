import MappedKVFormat
import MappedKVIO
import Synchronization

/// The meta stamp this process last saw, readable without the store's mutex, so that a caller that
/// only asks "did any process change the store since this process last looked?" gets its answer
/// from a handful of loads (MappedKVCache asks it on every memory hit).
///
/// The invariants:
/// - The store publishes here, under its mutex, every stamp it adopts as ``StoreCore/observed``,
///   and withdraws the copy while its memory is released or once it is closed. A reader that finds
///   the copy published and equal to the stamp in the meta file knows no process has written since
///   (docs/FORMAT.md 6.3: every append moves the CRC and size, every other change the sequence).
/// - A catch-up raises ``ChangeSignal/pending`` before it publishes the stamp it caught up to, so a
///   reader that sees the new stamp here also sees the signal and delivers the changes.
/// - The copy is a sequence lock: ``version`` is odd while it is being written or withdrawn, and a
///   reader trusts only fields read between two equal even versions.
/// - The meta file is read through a mapping of its own, made once and kept until this object goes:
///   the store's mapping may be remapped under its mutex, which a reader here does not hold.
///
/// ``isCurrent`` is inlined into other modules (``MappedKV/synchronizeChangesIfMoved()``), so the
/// fields it reads are `@usableFromInline`; nothing outside this file writes them.
@usableFromInline
final class ObservedStamp: Sendable {
    /// Even while ``sequenceAndDigest`` and ``actualSize`` hold a published stamp.
    @usableFromInline let version = Atomic<UInt64>(1)
    /// The stamp's sequence in the high half, its CRC digest in the low half.
    @usableFromInline let sequenceAndDigest = Atomic<UInt64>(0)
    @usableFromInline let actualSize = Atomic<UInt32>(0)
    /// A read-only mapping of the meta struct, or nil if the meta file was too short to hold one.
    /// Immutable after init; the mapping is released with this object.
    private nonisolated(unsafe) let page: MappedRegion?
    /// The start of ``page``'s mapping, which never moves: read here rather than through the
    /// region, so that the check is one load shorter and makes no call.
    @usableFromInline nonisolated(unsafe) let base: UnsafeRawPointer?

    init(page: MappedRegion?) {
        let page = page.flatMap { $0.length >= MetaInfo.size ? $0 : nil }
        self.page = page
        self.base = page.flatMap { UnsafeRawPointer($0.bytes.baseAddress) }
    }

    /// Publishes `stamp` as the one the store has caught up to. Called under the store's mutex.
    func publish(_ stamp: MetaStamp) {
        let odd = version.load(ordering: .relaxed) | 1
        version.store(odd, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        sequenceAndDigest.store(UInt64(stamp.sequence) << 32 | UInt64(stamp.crcDigest), ordering: .relaxed)
        actualSize.store(stamp.actualSize, ordering: .relaxed)
        version.store(odd &+ 1, ordering: .releasing)
    }

    /// Withdraws the copy: ``isCurrent`` is false until the next ``publish(_:)``. Called under the
    /// store's mutex.
    func withdraw() {
        version.store(version.load(ordering: .relaxed) | 1, ordering: .releasing)
    }

    /// Whether the stamp in the meta file is the published one: true means no process has changed
    /// the store since this process last caught up or wrote; false means it may have (or nothing is
    /// published), and the caller takes the store's mutex to find out.
    @inlinable
    var isCurrent: Bool {
        guard let base else { return false }
        let before = version.load(ordering: .acquiring)
        guard before & 1 == 0 else { return false }
        let published = sequenceAndDigest.load(ordering: .relaxed)
        let size = actualSize.load(ordering: .relaxed)
        atomicMemoryFence(ordering: .acquiring)
        guard version.load(ordering: .relaxed) == before else { return false }
        let stamp = MetaStamp(stored: UnsafeRawBufferPointer(start: base, count: MetaInfo.size))
        return stamp.actualSize == size && UInt64(stamp.sequence) << 32 | UInt64(stamp.crcDigest) == published
    }
}
