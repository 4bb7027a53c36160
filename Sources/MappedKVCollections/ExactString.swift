import Foundation

// A string that equals and hashes by its UTF-8 bytes, for keying the module's own tables by store
// keys and bucket names. The invariant: two `ExactString`s are equal exactly when the store would
// take them for one key. Swift's `String` `==` and hashing follow canonical equivalence ("é" as one
// scalar equals "e" followed by a combining accent), under which two keys the store holds apart
// would share one table entry.

/// A string compared and hashed by its UTF-8 bytes.
struct ExactString: Hashable, Sendable {
    var string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: ExactString, rhs: ExactString) -> Bool {
        var left = lhs.string
        var right = rhs.string
        return left.withUTF8 { left in
            right.withUTF8 { right in
                guard left.count == right.count else { return false }
                guard let a = left.baseAddress, let b = right.baseAddress else { return true }
                return memcmp(a, b, left.count) == 0
            }
        }
    }

    func hash(into hasher: inout Hasher) {
        var string = string
        string.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
