import MappedKV
import MappedKVFormat

/// The type of a stress key's values, fixed by the key's slot (slot % 8, in this order).
enum StressValueKind: CaseIterable, Sendable {
    case int32, int64, uint64, bool, double
    /// A string value under 100 bytes.
    case smallString
    /// A string value of 300 to 3000 bytes.
    case largeString
    /// A bytes value of 300 to 3000 bytes.
    case bytes

    /// Whether values of this kind carry a self-checking payload (``SelfCheckingPayload``).
    var isSelfChecking: Bool { self == .smallString || self == .largeString || self == .bytes }
}

/// A value the stress workload stores, with its exact journal form (``token``).
///
/// Numbers are derived from the writing child and its operation number, so the journal records
/// them exactly; strings and bytes are ``SelfCheckingPayload``s, recorded in the journal by length
/// and CRC-32.
enum StressValue: Equatable, Sendable {
    case int32(Int32)
    case int64(Int64)
    case uint64(UInt64)
    case bool(Bool)
    case double(Double)
    case string(String)
    case bytes([UInt8])

    /// The value child `key.child` writes to `key` in its operation `opno`; `random` picks the
    /// lengths and padding of strings and bytes.
    static func make(for key: StressKey, opno: Int, using random: inout some RandomNumberGenerator) -> StressValue {
        let child = key.child
        let negative = opno % 2 == 1
        switch key.kind {
        case .int32:
            let magnitude = Int32(truncatingIfNeeded: (child & 0x7F) << 24 | (opno & 0xFF_FFFF))
            return .int32(negative ? 0 &- magnitude : magnitude)
        case .int64:
            let magnitude = Int64(child) << 40 | Int64(opno)
            return .int64(negative ? -magnitude : magnitude)
        case .uint64:
            return .uint64(UInt64(child + 1) << 40 | UInt64(opno) | (negative ? 1 << 63 : 0))
        case .bool:
            return .bool(opno % 2 == 0)
        case .double:
            let magnitude = Double(child) * 1_048_576 + Double(opno) + 0.375
            return .double(negative ? -magnitude : magnitude)
        case .smallString:
            let length = Int.random(in: 0..<100, using: &random)
            return .string(
                String(
                    decoding: SelfCheckingPayload.make(
                        key: key, opno: opno, length: length, text: true, using: &random), as: UTF8.self))
        case .largeString:
            let length = Int.random(in: 300...3000, using: &random)
            return .string(
                String(
                    decoding: SelfCheckingPayload.make(
                        key: key, opno: opno, length: length, text: true, using: &random), as: UTF8.self))
        case .bytes:
            let length = Int.random(in: 300...3000, using: &random)
            return .bytes(SelfCheckingPayload.make(key: key, opno: opno, length: length, text: false, using: &random))
        }
    }

    /// The value's exact journal form, without spaces: `i32:<n>`, `i64:<n>`, `u64:<n>`,
    /// `b:<true|false>`, `f64:<bit pattern in hex>`, `str:<byte count>:<crc32>` or
    /// `bin:<byte count>:<crc32>`.
    var token: String {
        switch self {
        case .int32(let value): "i32:\(value)"
        case .int64(let value): "i64:\(value)"
        case .uint64(let value): "u64:\(value)"
        case .bool(let value): "b:\(value)"
        case .double(let value): "f64:" + String(value.bitPattern, radix: 16)
        case .string(let value): "str:\(value.utf8.count):" + Self.hex(CRC32.checksum(value.utf8))
        case .bytes(let value): "bin:\(value.count):" + Self.hex(CRC32.checksum(value))
        }
    }

    /// The bytes a self-checking value carries; nil for numbers and booleans.
    var selfCheckingBytes: [UInt8]? {
        switch self {
        case .string(let value): Array(value.utf8)
        case .bytes(let value): value
        default: nil
        }
    }

    /// Stores the value under `key`.
    func store(in store: some KeyValueAccess, forKey key: String) throws(MappedKVError) {
        switch self {
        case .int32(let value): try store.set(value, forKey: key)
        case .int64(let value): try store.set(value, forKey: key)
        case .uint64(let value): try store.set(value, forKey: key)
        case .bool(let value): try store.set(value, forKey: key)
        case .double(let value): try store.set(value, forKey: key)
        case .string(let value): try store.set(value, forKey: key)
        case .bytes(let value): try store.set(value, forKey: key)
        }
    }

    /// The value of `key` read as `kind`, or nil if the key is absent.
    static func read(
        _ kind: StressValueKind, forKey key: String, from store: some KeyValueAccess
    ) throws(MappedKVError) -> StressValue? {
        switch kind {
        case .int32: try store.int32(forKey: key).map(StressValue.int32)
        case .int64: try store.int64(forKey: key).map(StressValue.int64)
        case .uint64: try store.uint64(forKey: key).map(StressValue.uint64)
        case .bool: try store.bool(forKey: key).map(StressValue.bool)
        case .double: try store.double(forKey: key).map(StressValue.double)
        case .smallString, .largeString: try store.string(forKey: key).map(StressValue.string)
        case .bytes: try store.bytes(forKey: key).map(StressValue.bytes)
        }
    }

    /// `value` as 8 lowercase hex digits.
    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

/// The layout of string and bytes stress values, which lets any reader tell a whole value of a
/// given key from a torn, damaged or misplaced one:
/// `<key>|<child>|<opno>|<padding>|<crc32 in 8 hex digits of everything before the last '|'>`.
enum SelfCheckingPayload {
    /// The bytes a padding of text values is drawn from, one scalar at a time: mostly ASCII
    /// (never `|`), with some two-, three- and four-byte UTF-8 scalars.
    private static let textScalars: [[UInt8]] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:-_=+*#@!?/()[]{}".map { Array($0.utf8) }
        + ["é", "ß", "€", "中", "🦊"].map { Array($0.utf8) }

    /// A value of `key` written by its child in operation `opno`, `length` bytes long (or just
    /// the fixed parts, if they are longer). Text values are valid UTF-8; bytes values have
    /// arbitrary padding bytes.
    static func make(
        key: StressKey, opno: Int, length: Int, text: Bool, using random: inout some RandomNumberGenerator
    ) -> [UInt8] {
        var bytes = Array("\(key.name)|\(key.child)|\(opno)|".utf8)
        let paddingEnd = max(bytes.count, length - 9)
        while bytes.count < paddingEnd {
            if text {
                let remaining = paddingEnd - bytes.count
                let scalar = textScalars[Int.random(in: 0..<textScalars.count, using: &random)]
                bytes += scalar.count <= remaining ? scalar : [UInt8(ascii: "x")]
            } else {
                bytes.append(UInt8.random(in: 0...255, using: &random))
            }
        }
        let checksum = StressValue.hex(CRC32.checksum(bytes))
        bytes.append(UInt8(ascii: "|"))
        bytes += Array(checksum.utf8)
        return bytes
    }

    /// Why `bytes` is not a whole value of `key`, or nil if it is one.
    static func problem(in bytes: [UInt8], expectedKey key: StressKey) -> String? {
        guard bytes.count >= 9, bytes[bytes.count - 9] == UInt8(ascii: "|") else {
            return "no checksum at the end (\(bytes.count) bytes: torn or foreign value)"
        }
        let body = bytes[..<(bytes.count - 9)]
        let stored = String(decoding: bytes[(bytes.count - 8)...], as: UTF8.self)
        let computed = StressValue.hex(CRC32.checksum(body))
        guard stored == computed else {
            return "checksum mismatch: the value says \(stored), its bytes give \(computed) (torn or damaged value)"
        }
        let fields = body.split(separator: UInt8(ascii: "|"), maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count >= 3 else { return "the value has no key, child and operation fields" }
        let named = String(decoding: fields[0], as: UTF8.self)
        guard named == key.name else { return "the value names key '\(named)', not '\(key.name)' (foreign value)" }
        let child = String(decoding: fields[1], as: UTF8.self)
        guard child == String(key.child) else { return "the value names child \(child), not \(key.child)" }
        guard Int(String(decoding: fields[2], as: UTF8.self)) != nil else {
            return "the value's operation number is not a number"
        }
        return nil
    }
}
