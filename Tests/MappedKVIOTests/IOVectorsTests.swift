// Proves IOVectors' bookkeeping, which FileDescriptor's vectored read and write go round again with
// after a short call: empty buffers are left out, a transfer that ends inside a buffer makes the next
// call start there at the right byte, one that ends on a boundary starts the next buffer whole, and
// one call is given at most IOV_MAX buffers. (A real short read or write cannot be made to stop at a
// chosen byte and then go on, so the resumption is checked here, on the vectors themselves.)

import Glibc
import MappedKVIO
import Testing

/// The base address and length of every vector the next call would be given.
private func remaining(_ vectors: borrowing IOVectors) -> [(UnsafeMutableRawPointer?, Int)] {
    var seen: [(UnsafeMutableRawPointer?, Int)] = []
    _ = vectors.withRemaining { base, count in
        for index in 0..<Int(count) { seen.append((base[index].iov_base, base[index].iov_len)) }
        return 0
    }
    return seen
}

@Suite("IOVectors")
struct IOVectorsTests {
    @Test("a transfer that stops inside a buffer resumes at its next byte; one on a boundary, at the next buffer")
    func advanceResumesWhereTheTransferStopped() throws {
        let first = [UInt8](repeating: 1, count: 20)
        let second = [UInt8](repeating: 2, count: 100)
        let empty: [UInt8] = []
        first.withUnsafeBytes { first in
            second.withUnsafeBytes { second in
                empty.withUnsafeBytes { empty in
                    let start1 = UnsafeMutableRawPointer(mutating: first.baseAddress)
                    let start2 = UnsafeMutableRawPointer(mutating: second.baseAddress)
                    let done: Void? = try? IOVectors.with([first, empty, second]) { vectors in
                        #expect(remaining(vectors).map(\.1) == [20, 100], "the empty buffer is left out")
                        #expect(remaining(vectors).first?.0 == start1)
                        vectors.advance(by: 20)  // exactly the first buffer
                        #expect(remaining(vectors).map(\.1) == [100])
                        #expect(remaining(vectors).first?.0 == start2)
                        vectors.advance(by: 30)  // stops inside the second
                        #expect(remaining(vectors).map(\.1) == [70])
                        #expect(remaining(vectors).first?.0 == start2.map { $0 + 30 })
                        #expect(vectors.transferred == 50 && !vectors.isComplete)
                        vectors.advance(by: 70)
                        #expect(vectors.isComplete && vectors.transferred == 120)
                        #expect(remaining(vectors).isEmpty)
                    }
                    #expect(done != nil)
                }
            }
        }
    }

    @Test("one call is given at most IOV_MAX buffers, and the rest after it")
    func oneCallTakesAtMostTheLimit() throws {
        let byte: [UInt8] = [7]
        try byte.withUnsafeBytes { byte in
            let buffers = Array(repeating: byte, count: IOVectors.callLimit + 5)
            try IOVectors.with(buffers) { vectors in
                #expect(remaining(vectors).count == IOVectors.callLimit)
                vectors.advance(by: IOVectors.callLimit)
                #expect(remaining(vectors).count == 5)
            }
        }
        #expect(IOVectors.callLimit == sysconf(Int32(_SC_IOV_MAX)))
    }
}
