import Foundation

// Reads one scalar out of a JSON document without building it: the value an index over a path
// (`value.user.age`) needs from every entry, at open and at every put. The invariant: the scanner
// never reads outside the buffer, and it answers nil (no value) for anything that is not a JSON
// document with a scalar at that path, so a malformed value is left out of the index, never misread.

/// A scalar found at a JSON path.
enum JSONScalar: Equatable {
    case number(Double, exactInteger: Int64?)
    case string(String)
    case bool(Bool)
}

/// A forward-only reader over the UTF-8 bytes of a JSON document.
struct JSONPathScanner {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    private init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The scalar at `path` (object member names, outermost first) in `document`, or nil when the
    /// path is absent, leads to an object, an array or null, or the document is malformed on the way.
    static func scalar(at path: [String], in document: UnsafeRawBufferPointer) -> JSONScalar? {
        var scanner = JSONPathScanner(document)
        return scanner.find(path[...])
    }

    /// The scalar of each top-level member of `names` in `document`, in order: for each name what
    /// ``scalar(at:in:)`` gives for the path `[name]`, read in one pass (at most 64 names).
    static func scalars(ofMembers names: [String], in document: UnsafeRawBufferPointer) -> [JSONScalar?] {
        var results = [JSONScalar?](repeating: nil, count: names.count)
        forEachMember(names.map { Array($0.utf8) }, in: document) { results[$0] = $1 }
        return results
    }

    /// Calls `found` with the position in `names` (UTF-8 bytes, at most 64 names) and the scalar
    /// of each top-level member of `document` named so, as ``scalars(ofMembers:in:)`` finds them;
    /// names it is not called for have no value.
    static func forEachMember(
        _ names: [[UInt8]], in document: UnsafeRawBufferPointer, _ found: (Int, JSONScalar?) -> Void
    ) {
        precondition(names.count <= 64, "at most 64 names")
        var scanner = JSONPathScanner(document)
        scanner.readMembers(names, found)
    }

    /// Reads the top-level members `names`, until each has been met or the document ends or
    /// turns out malformed (then the names not met yet have no value). The structure is walked
    /// over the raw bytes with a local offset; values are read and skipped by the general code.
    private mutating func readMembers(_ names: [[UInt8]], _ found: (Int, JSONScalar?) -> Void) {
        guard let base = bytes.baseAddress else { return }
        let end = bytes.count
        var met: UInt64 = 0
        var left = names.count
        var index = position
        @inline(__always) func at(_ offset: Int) -> UInt8 { base.load(fromByteOffset: offset, as: UInt8.self) }
        @inline(__always) func skipSpace() { while index < end, Self.isSpace(at(index)) { index += 1 } }
        @inline(__always) func next(is byte: UInt8) -> Bool { index < end && at(index) == byte }
        skipSpace()
        guard next(is: UInt8(ascii: "{")) else { return }
        index += 1
        skipSpace()
        if next(is: UInt8(ascii: "}")) { return }
        while left > 0 {
            skipSpace()
            guard next(is: UInt8(ascii: "\"")) else { return }
            position = index
            guard let member = scanMemberName() else { return }
            index = position
            var matches: UInt64 = 0
            for which in names.indices where met & (1 << UInt64(which)) == 0 {
                let equal =
                    member.unescaped.map { $0.utf8.elementsEqual(names[which]) }
                    ?? Self.equal(member.bytes, names[which])
                if equal { matches |= 1 << UInt64(which) }
            }
            skipSpace()
            guard next(is: UInt8(ascii: ":")) else { return }
            index += 1
            skipSpace()
            position = index
            if matches != 0 {
                // The first member of a name gives its value, as `find` takes the first.
                let scalar = readScalar()
                for which in names.indices where matches & (1 << UInt64(which)) != 0 {
                    found(which, scalar)
                    left -= 1
                }
                met |= matches
                if scalar == nil {
                    position = index
                    guard skipValue() else { return }
                }
            } else {
                guard skipValue() else { return }
            }
            index = position
            skipSpace()
            guard next(is: UInt8(ascii: ",")) else { return }
            index += 1
        }
    }

    /// Whether `byte` is JSON white space.
    @inline(__always)
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    /// Whether `bytes` are `name`'s, compared byte by byte (names are short: a call to `memcmp`
    /// costs more).
    @inline(__always)
    private static func equal(_ bytes: UnsafeRawBufferPointer, _ name: [UInt8]) -> Bool {
        guard name.count == bytes.count else { return false }
        return name.withUnsafeBufferPointer { name in
            for offset in 0..<bytes.count where bytes[offset] != name[offset] { return false }
            return true
        }
    }

    /// A member name as ``scanMemberName()`` reads it: its bytes where they lie, and, when it has
    /// escapes, its text with them resolved (which is what names compare against then).
    private struct ScannedName {
        var bytes: UnsafeRawBufferPointer
        var unescaped: String?
    }

    /// Reads a member name (the position is after its closing quote); nil if it is malformed.
    @inline(__always)
    private mutating func scanMemberName() -> ScannedName? {
        let start = position + 1
        var index = start
        var hasEscape = false
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            if bytes[index] == UInt8(ascii: "\\") {
                hasEscape = true
                index += 1
            }
            index += 1
        }
        guard index < bytes.count else { return nil }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
        guard hasEscape else {
            position = index + 1
            return ScannedName(bytes: raw, unescaped: nil)
        }
        guard let text = readString() else { return nil }
        return ScannedName(bytes: raw, unescaped: text)
    }

    private mutating func find(_ path: ArraySlice<String>) -> JSONScalar? {
        skipSpace()
        guard let name = path.first else { return readScalar() }
        guard peek() == UInt8(ascii: "{") else { return nil }
        position += 1
        skipSpace()
        if peek() == UInt8(ascii: "}") { return nil }
        while true {
            skipSpace()
            guard peek() == UInt8(ascii: "\""), let matches = readMemberName(equalTo: name) else { return nil }
            skipSpace()
            guard peek() == UInt8(ascii: ":") else { return nil }
            position += 1
            if matches { return find(path.dropFirst()) }
            guard skipValue() else { return nil }
            skipSpace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            default: return nil  // "}" ends the object without the member; anything else is malformed.
            }
        }
    }

    private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    /// Reads a member name and tells whether it is `name`, comparing bytes (names with escapes are
    /// unescaped first); nil if the string is malformed.
    private mutating func readMemberName(equalTo name: String) -> Bool? {
        guard let member = scanMemberName() else { return nil }
        guard let unescaped = member.unescaped else { return member.bytes.elementsEqual(name.utf8) }
        return unescaped.utf8.elementsEqual(name.utf8)
    }

    private mutating func skipSpace() {
        while let byte = peek(), Self.isSpace(byte) { position += 1 }
    }

    /// A string, number or boolean at the current position.
    private mutating func readScalar() -> JSONScalar? {
        switch peek() {
        case UInt8(ascii: "\""): return readString().map(JSONScalar.string)
        case UInt8(ascii: "t"): return readLiteral("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return readLiteral("false") ? .bool(false) : nil
        case let byte? where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte): return readNumber()
        default: return nil
        }
    }

    private mutating func readLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[position + offset] != literal.utf8Start[offset] { return false }
        position += count
        return true
    }

    private mutating func readNumber() -> JSONScalar? {
        // The common case, a plain integer of up to 18 digits, without going through text.
        var index = position
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var value: Int64 = 0
        let digitsStart = index
        // At most 18 digits: no overflow, so the arithmetic need not check for it.
        while index < bytes.count, index - digitsStart < 18, (0x30...0x39).contains(bytes[index]) {
            value = value &* 10 &+ Int64(bytes[index] &- 0x30)
            index += 1
        }
        let ends =
            index == bytes.count
            || !((0x30...0x39).contains(bytes[index]) || bytes[index] == UInt8(ascii: ".")
                || bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E"))
        if index > digitsStart, ends {
            position = index
            let integer = negative ? -value : value
            return .number(Double(integer), exactInteger: integer)
        }
        let start = position
        while let byte = peek(),
            (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        {
            position += 1
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { return nil }
        return .number(value, exactInteger: Int64(text))
    }

    /// A string with its escapes resolved; the position is after the closing quote.
    private mutating func readString() -> String? {
        guard peek() == UInt8(ascii: "\"") else { return nil }
        position += 1
        let start = position
        var hasEscape = false
        while let byte = peek(), byte != UInt8(ascii: "\"") {
            if byte == UInt8(ascii: "\\") {
                hasEscape = true
                position += 1
            }
            position += 1
        }
        guard position < bytes.count else { return nil }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
        position += 1
        // The document was written as UTF-8 JSON; decoding repairs what is not, as any reader would.
        guard hasEscape else { return String(decoding: raw, as: UTF8.self) }
        return Self.unescape(raw)
    }

    /// Resolves the escapes of a string's contents, or nil if one is malformed.
    private static func unescape(_ raw: UnsafeRawBufferPointer) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(raw.count)
        var index = 0
        var pendingHigh: UInt32?
        func appendScalar(_ value: UInt32) -> Bool {
            guard let scalar = Unicode.Scalar(value) else { return false }
            output.append(contentsOf: Array(String(Character(scalar)).utf8))
            return true
        }
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\") else {
                guard pendingHigh == nil else { return nil }
                output.append(byte)
                index += 1
                continue
            }
            guard index + 1 < raw.count else { return nil }
            let escape = raw[index + 1]
            index += 2
            if escape == UInt8(ascii: "u") {
                guard index + 4 <= raw.count,
                    let code = UInt32(
                        String(decoding: UnsafeRawBufferPointer(rebasing: raw[index..<index + 4]), as: UTF8.self),
                        radix: 16)
                else { return nil }
                index += 4
                if let high = pendingHigh {
                    guard (0xDC00...0xDFFF).contains(code) else { return nil }
                    pendingHigh = nil
                    guard appendScalar(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)) else { return nil }
                } else if (0xD800...0xDBFF).contains(code) {
                    pendingHigh = code
                } else {
                    guard appendScalar(code) else { return nil }
                }
                continue
            }
            guard pendingHigh == nil else { return nil }
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            default: return nil
            }
        }
        guard pendingHigh == nil else { return nil }
        return String(validating: output, as: UTF8.self)
    }

    /// Skips one value of any kind; false if it is malformed.
    private mutating func skipValue() -> Bool {
        skipSpace()
        switch peek() {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while let byte = peek() {
                switch byte {
                case UInt8(ascii: "\""):
                    guard skipString() else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        position += 1
                        return true
                    }
                default: break
                }
                position += 1
            }
            return false
        case UInt8(ascii: "\""): return skipString()
        case UInt8(ascii: "n"): return readLiteral("null")
        case .none: return false
        default: return skipPlainInteger() || readScalar() != nil
        }
    }

    /// Skips a plain integer (an optional minus, then digits up to a byte that cannot continue a
    /// number), which ``readNumber()`` would accept, without converting it; false, moving nothing,
    /// for anything else (which the caller reads the long way).
    private mutating func skipPlainInteger() -> Bool {
        var index = position
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < bytes.count, index - digitsStart < 18, (0x30...0x39).contains(bytes[index]) { index += 1 }
        guard index > digitsStart else { return false }
        if index < bytes.count {
            let byte = bytes[index]
            guard
                !((0x30...0x39).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
                    || byte == UInt8(ascii: "E"))
            else { return false }
        }
        position = index
        return true
    }

    private mutating func skipString() -> Bool {
        position += 1
        while let byte = peek(), byte != UInt8(ascii: "\"") { position += byte == UInt8(ascii: "\\") ? 2 : 1 }
        guard position < bytes.count else { return false }
        position += 1
        return true
    }
}
