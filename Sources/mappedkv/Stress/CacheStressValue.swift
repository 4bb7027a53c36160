import MappedKVFormat

/// The values of the `cache` stress workload: self-describing, so that any reader can tell a
/// value put for a key from anything else.
///
/// Layout: `<key>|<child>|<incarnation>|<sequence>|<padding>|<crc32 in 8 hex digits of everything
/// before the last '|'>`, where the padding is random bytes (any byte, `|` included). The writer
/// is the child, its incarnation and the operation number of the put, which together name one
/// put of the whole run.
enum CacheStressValue {
    /// The writer of a value.
    struct Writer: Hashable, Sendable, CustomStringConvertible {
        /// The child that put the value.
        var child: Int
        /// Its incarnation.
        var incarnation: Int
        /// The operation number of the put.
        var sequence: Int

        var description: String { "child \(child) incarnation \(incarnation) operation \(sequence)" }

        /// The writer as one journal word: `<child>.<incarnation>.<sequence>`.
        var token: String { "\(child).\(incarnation).\(sequence)" }

        /// A writer.
        init(child: Int, incarnation: Int, sequence: Int) {
            self.child = child
            self.incarnation = incarnation
            self.sequence = sequence
        }

        /// Parses a ``token``; nil if it is not one.
        init?(token: Substring) {
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let child = Int(parts[0]), let incarnation = Int(parts[1]),
                let sequence = Int(parts[2])
            else { return nil }
            self.init(child: child, incarnation: incarnation, sequence: sequence)
        }
    }

    /// What a read value turned out to be.
    enum Check: Equatable, Sendable {
        /// A whole value put for the expected key, by `Writer`.
        case valid(Writer)
        /// Not a value put for the expected key, and why.
        case invalid(String)
    }

    /// How many keys the children share.
    static let keyCount = 32
    /// The largest value, in bytes.
    static let maximumLength = 60 * 1024

    /// The name of shared key `index`.
    static func key(_ index: Int) -> String { "k\(index)" }

    /// A random one of the shared keys.
    static func randomKey(using random: inout some RandomNumberGenerator) -> String {
        key(Int.random(in: 0..<keyCount, using: &random))
    }

    /// A value length spread across `inlineThreshold`: a third small (10 B to 1 KiB), a third up
    /// to the threshold, a third above it (up to ``maximumLength``).
    static func randomLength(inlineThreshold: Int, using random: inout some RandomNumberGenerator) -> Int {
        let threshold = min(max(inlineThreshold, 1024), maximumLength - 1)
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return Int.random(in: 10...1024, using: &random)
        case 1: return Int.random(in: 1024...threshold, using: &random)
        default: return Int.random(in: (threshold + 1)...maximumLength, using: &random)
        }
    }

    /// A value of `key` by `writer`, `length` bytes long (or just the fixed parts, if they are longer).
    static func make(
        key: String, writer: Writer, length: Int, using random: inout some RandomNumberGenerator
    ) -> [UInt8] {
        var bytes = Array("\(key)|\(writer.child)|\(writer.incarnation)|\(writer.sequence)|".utf8)
        let paddingEnd = max(bytes.count, length - 9)
        bytes.reserveCapacity(paddingEnd + 9)
        while bytes.count < paddingEnd {
            let word = random.next()
            for shift in stride(from: 0, to: 64, by: 8) where bytes.count < paddingEnd {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        let checksum = StressValue.hex(CRC32.checksum(bytes))
        bytes.append(UInt8(ascii: "|"))
        bytes += Array(checksum.utf8)
        return bytes
    }

    /// Checks that `bytes` are a whole value put for `key`, and returns its writer.
    static func check(_ bytes: [UInt8], expectedKey key: String) -> Check {
        guard bytes.count >= 9, bytes[bytes.count - 9] == UInt8(ascii: "|") else {
            return .invalid("no checksum at the end (\(bytes.count) bytes: torn or foreign value)")
        }
        let body = bytes[..<(bytes.count - 9)]
        let stored = String(decoding: bytes[(bytes.count - 8)...], as: UTF8.self)
        let computed = StressValue.hex(CRC32.checksum(body))
        guard stored == computed else {
            return .invalid(
                "checksum mismatch: the value says \(stored), its \(bytes.count) bytes give \(computed) (torn or damaged value)"
            )
        }
        let fields = body.split(separator: UInt8(ascii: "|"), maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5 else { return .invalid("the value lacks its key, child, incarnation or operation") }
        let named = String(decoding: fields[0], as: UTF8.self)
        guard named == key else { return .invalid("the value names key '\(named)', not '\(key)' (foreign value)") }
        let numbers = fields[1...3].map { Int(String(decoding: $0, as: UTF8.self)) }
        guard let child = numbers[0], let incarnation = numbers[1], let sequence = numbers[2] else {
            return .invalid("the value's child, incarnation or operation is not a number")
        }
        return .valid(Writer(child: child, incarnation: incarnation, sequence: sequence))
    }
}
