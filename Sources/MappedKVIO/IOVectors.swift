import Glibc

// The buffers of a vectored read or write (`preadv`, `pwritev`) and how far the calls have got
// through them. The invariant: `vectors[first..<count]` describe exactly the bytes not yet
// transferred, in order, so a call after a short one goes on from where it stopped.

/// The `iovec`s of a vectored transfer and its progress.
package struct IOVectors: ~Copyable {
    /// The most buffers one call takes (`IOV_MAX` on Linux).
    package static let callLimit = 1024

    private let vectors: UnsafeMutableBufferPointer<iovec>
    private var count = 0
    /// The first vector not transferred whole.
    private var first = 0
    /// The bytes transferred so far.
    package private(set) var transferred = 0

    /// Calls `body` with the vectors of the non-empty `buffers`, in order.
    package static func with<Buffers: Collection<UnsafeRawBufferPointer>, R>(
        _ buffers: Buffers, _ body: (inout IOVectors) throws(SystemError) -> R
    ) throws(SystemError) -> R {
        try withUnsafeTemporaryAllocation(of: iovec.self, capacity: max(1, buffers.count)) {
            (storage) throws(SystemError) -> R in
            var vectors = IOVectors(vectors: storage)
            for buffer in buffers where buffer.count > 0 {
                // The kernel only reads through the pointer of a write; iovec has no constant variant.
                storage[vectors.count] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: buffer.baseAddress), iov_len: buffer.count)
                vectors.count += 1
            }
            return try body(&vectors)
        }
    }

    private init(vectors: UnsafeMutableBufferPointer<iovec>) { self.vectors = vectors }

    /// Whether every byte has been transferred.
    package var isComplete: Bool { first == count }

    /// Calls `transfer` with the vectors still to go (at most ``callLimit``) and their count;
    /// returns what it returns.
    package func withRemaining(_ transfer: (UnsafePointer<iovec>, Int32) -> Int) -> Int {
        guard let base = vectors.baseAddress else { return 0 }
        return transfer(base + first, Int32(min(count - first, Self.callLimit)))
    }

    /// Records that a call transferred `n` more bytes: the vectors it filled or emptied are done,
    /// and the one it stopped inside now starts past what it took.
    package mutating func advance(by n: Int) {
        transferred += n
        var rest = n
        while first < count && rest >= vectors[first].iov_len {
            rest -= vectors[first].iov_len
            first += 1
        }
        if rest > 0, let start = vectors[first].iov_base {
            vectors[first] = iovec(iov_base: start + rest, iov_len: vectors[first].iov_len - rest)
        }
    }
}
