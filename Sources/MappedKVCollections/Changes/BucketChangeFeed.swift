import Synchronization

// The buffer between the writers of a bucket's changes and the one task that reads them. The
// invariants:
// - changes leave in the order they were pushed; at most `limit` wait, and a push that would
//   exceed that drops every waiting change for one `resync(.overflow)`, so nothing is lost silently;
// - once finished, nothing is pushed any more; a waiting `next()` returns nil at once when the
//   reader was cancelled, after the waiting changes when the store closed;
// - the teardown (ending the store subscription and leaving the hub) runs exactly once, at the
//   finish or when the last reference to the feed goes, never under the feed's lock.

/// A bounded queue of one stream's changes, with the readers waiting for it.
final class BucketChangeFeed: Sendable {
    private struct State {
        var buffer: [BucketChange] = []
        /// The first change in `buffer` not yet read.
        var head = 0
        var finished = false
        /// `next()` calls waiting for a change, oldest first.
        var waiters: [CheckedContinuation<BucketChange?, Never>] = []

        var waiting: Int { buffer.count - head }
    }

    /// The bucket's name, compared byte by byte.
    let bucket: ExactString
    /// The bytes every store key of the bucket starts with.
    let keyPrefix: [UInt8]
    /// The most changes that wait before an overflow.
    let limit: Int
    private let state = Mutex(State())
    private let teardown = Mutex<(@Sendable () -> Void)?>(nil)

    init(bucket: String, limit: Int) {
        self.bucket = ExactString(bucket)
        self.keyPrefix = Array(CollectionKey.prefix(ofBucket: bucket).utf8)
        self.limit = max(1, limit)
    }

    deinit { takeTeardown()?() }

    /// Sets what ends the feed's subscriptions; if the feed finished meanwhile, runs it now.
    func setTeardown(_ body: @escaping @Sendable () -> Void) {
        let finished = state.withLock { $0.finished }
        if finished {
            body()
            return
        }
        teardown.withLock { $0 = body }
        // A finish between the check and the store: it found no teardown, so run it here.
        if state.withLock({ $0.finished }) { takeTeardown()?() }
    }

    /// Queues `changes` in order (handing the first ones to waiting readers).
    func push(_ changes: [BucketChange]) {
        guard !changes.isEmpty else { return }
        var handed: [(CheckedContinuation<BucketChange?, Never>, BucketChange)] = []
        state.withLock { state in
            guard !state.finished else { return }
            for change in changes {
                if !state.waiters.isEmpty {
                    handed.append((state.waiters.removeFirst(), change))
                } else if change.key == nil, state.waiting > 0, state.buffer.last == change {
                    continue  // the same resync, already waiting
                } else if state.waiting >= limit {
                    state.buffer = [.resync(.overflow)]
                    state.head = 0
                } else {
                    state.buffer.append(change)
                }
            }
        }
        for (waiter, change) in handed { waiter.resume(returning: change) }
    }

    /// Queues one change.
    func push(_ change: BucketChange) { push([change]) }

    /// Ends the feed: no change is queued any more. With `dropWaiting` (the reader was cancelled)
    /// the waiting changes go too; otherwise they are still read, then nil. Finishing twice is harmless.
    func finish(dropWaiting: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<BucketChange?, Never>] in
            state.finished = true
            if dropWaiting {
                state.buffer = []
                state.head = 0
            }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
        takeTeardown()?()
    }

    /// The teardown, taken so that it runs once.
    private func takeTeardown() -> (@Sendable () -> Void)? {
        teardown.withLock { value in
            defer { value = nil }
            return value
        }
    }

    /// The next change, waiting for one; nil once the feed has finished and nothing waits, or
    /// when the calling task is cancelled (which finishes the feed).
    func next() async -> BucketChange? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<BucketChange?, Never>) in
                let ready = state.withLock { state -> BucketChange?? in
                    if state.head < state.buffer.count {
                        let change = state.buffer[state.head]
                        state.head += 1
                        if state.head == state.buffer.count {
                            state.buffer.removeAll(keepingCapacity: state.buffer.count <= 1_024)
                            state.head = 0
                        } else if state.head >= 1_024, state.head * 2 >= state.buffer.count {
                            state.buffer.removeFirst(state.head)
                            state.head = 0
                        }
                        return .some(change)
                    }
                    if state.finished { return .some(nil) }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish(dropWaiting: true)
        }
    }

    /// How many changes wait to be read (for tests).
    var waitingCount: Int { state.withLock { $0.waiting } }
}
