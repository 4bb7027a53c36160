import MappedKV

/// One line of an `apply` script (the language of Vectors/mmkv-2.4.2/README.md).
enum ScriptOperation: Equatable {
    case setInt32(String, Int32)
    case setUInt32(String, UInt32)
    case setInt64(String, Int64)
    case setUInt64(String, UInt64)
    case setBool(String, Bool)
    case setDouble(String, Double)
    case setFloat(String, Float)
    case setString(String, String)
    case setBytes(String, [UInt8])
    case remove(String)
    case clear
    case trim
    case rekey(String?)
    case incrementInt64(String, Int64)
}

/// A script line that could not be parsed, with its 1-based line number.
struct ScriptError: Error, CustomStringConvertible {
    var line: Int
    var reason: String
    var description: String { "line \(line): \(reason)" }
}

/// Parses script lines.
enum ScriptParser {
    /// Parses one line; blank lines give nil.
    static func parse(_ line: Substring, number: Int) throws(ScriptError) -> ScriptOperation? {
        var text = line
        if text.hasSuffix("\r") { text = text.dropLast() }
        if text.allSatisfy({ $0 == " " || $0 == "\t" }) { return nil }
        let (op, afterOp) = split(text)
        func fail(_ reason: String) -> ScriptError { ScriptError(line: number, reason: reason) }
        func key() throws(ScriptError) -> (String, Substring?) {
            guard let afterOp else { throw fail("\(op): missing KEY") }
            let (key, rest) = split(afterOp)
            guard !key.isEmpty else { throw fail("\(op): missing KEY") }
            return (String(key), rest)
        }
        func keyAndValue() throws(ScriptError) -> (String, Substring) {
            let (key, rest) = try key()
            guard let rest else { throw fail("\(op): missing VALUE for key '\(key)'") }
            return (key, rest)
        }
        func numeric<T: LosslessStringConvertible>(_ type: T.Type) throws(ScriptError) -> (String, T) {
            let (key, text) = try keyAndValue()
            guard let value = T(String(text)) else { throw fail("\(op): '\(text)' is not a valid \(T.self)") }
            return (key, value)
        }
        func noArguments() throws(ScriptError) {
            guard afterOp == nil || afterOp!.allSatisfy({ $0 == " " }) else { throw fail("\(op) takes no arguments") }
        }
        switch op {
        case "set-int32":
            let (k, v) = try numeric(Int32.self)
            return .setInt32(k, v)
        case "set-uint32":
            let (k, v) = try numeric(UInt32.self)
            return .setUInt32(k, v)
        case "set-int64":
            let (k, v) = try numeric(Int64.self)
            return .setInt64(k, v)
        case "set-uint64":
            let (k, v) = try numeric(UInt64.self)
            return .setUInt64(k, v)
        case "set-double":
            let (k, v) = try numeric(Double.self)
            return .setDouble(k, v)
        case "set-float":
            let (k, v) = try numeric(Float.self)
            return .setFloat(k, v)
        case "incr-int64":
            let (k, v) = try numeric(Int64.self)
            return .incrementInt64(k, v)
        case "set-bool":
            let (key, text) = try keyAndValue()
            guard let value = ValueType.parseBool(String(text)) else {
                throw fail("set-bool: '\(text)' is not true or false")
            }
            return .setBool(key, value)
        case "set-string":
            let (key, text) = try keyAndValue()
            return .setString(key, String(text))
        case "set-bytes":
            let (key, text) = try keyAndValue()
            guard let bytes = Hex.decode(text) else { throw fail("set-bytes: '\(text)' is not hex") }
            return .setBytes(key, bytes)
        case "remove":
            let (key, rest) = try key()
            guard rest == nil else { throw fail("remove takes one KEY") }
            return .remove(key)
        case "clear":
            try noArguments()
            return .clear
        case "trim":
            try noArguments()
            return .trim
        case "rekey":
            guard let afterOp, !afterOp.isEmpty else { return .rekey(nil) }
            return .rekey(String(afterOp))
        default:
            throw fail("unknown operation '\(op)'")
        }
    }

    /// Splits at the first space: the word before it, and the rest after it (nil if there is no space).
    private static func split(_ text: Substring) -> (Substring, Substring?) {
        guard let space = text.firstIndex(of: " ") else { return (text, nil) }
        return (text[..<space], text[text.index(after: space)...])
    }
}

extension ScriptOperation {
    /// Applies the operation to `store`; a `rekey` key is AES-256 if `aes256`.
    func apply(to store: MappedKV, aes256: Bool) throws {
        switch self {
        case .setInt32(let k, let v): try store.set(v, forKey: k)
        case .setUInt32(let k, let v): try store.set(v, forKey: k)
        case .setInt64(let k, let v): try store.set(v, forKey: k)
        case .setUInt64(let k, let v): try store.set(v, forKey: k)
        case .setBool(let k, let v): try store.set(v, forKey: k)
        case .setDouble(let k, let v): try store.set(v, forKey: k)
        case .setFloat(let k, let v): try store.set(v, forKey: k)
        case .setString(let k, let v): try store.set(v, forKey: k)
        case .setBytes(let k, let v): try store.set(v, forKey: k)
        case .remove(let k): try store.removeValue(forKey: k)
        case .clear: try store.clearAll()
        case .trim: try store.trim()
        case .rekey(let newKey):
            try store.rekey(to: newKey.flatMap { CryptKey(Array($0.utf8), aes256: aes256) })
        case .incrementInt64(let k, let delta):
            // Atomic across processes: read and write under the exclusive lock.
            try store.withExclusiveLock { transaction in
                let current = try transaction.int64(forKey: k) ?? 0
                let (sum, overflow) = current.addingReportingOverflow(delta)
                guard !overflow else {
                    throw MappedKVError.invalidArgument("incr-int64 \(k): \(current) + \(delta) overflows Int64")
                }
                try transaction.set(sum, forKey: k)
            }
        }
    }
}
