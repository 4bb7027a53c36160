import Foundation

/// Foundation's `UserDefaults(suiteName:)` (swift-corelibs-foundation on Linux, built on
/// CFPreferences). The suite name is an absolute path, `<directory>/defaults`, so the suite's
/// property list is `<directory>/defaults.plist` in the store's own fresh directory.
///
/// Sets only change the process's copy of the domain; nothing is written until `synchronize()`
/// (called in `close`, untimed). Reads stat the property list for changes on every call.
final class UserDefaultsStore: BenchStore {
    private let defaults: UserDefaults
    private let suite: String

    init(directory: String) throws {
        suite = Self.suite(directory)
        guard let defaults = UserDefaults(suiteName: suite) else {
            throw BenchError("UserDefaults(suiteName: \(suite)) returned nil")
        }
        self.defaults = defaults
    }

    @inline(__always)
    func setInt32(_ value: Int32, forKey key: String) throws { defaults.set(Int(value), forKey: key) }

    @inline(__always)
    func setString(_ value: String, forKey key: String) throws { defaults.set(value, forKey: key) }

    /// `integer(forKey:)` answers 0 for a missing key, so a missing key counts as 0 here; the
    /// checks on the sums still catch missing values (every value but the first is non-zero).
    @inline(__always)
    func int32(forKey key: String) throws -> Int32? { Int32(truncatingIfNeeded: defaults.integer(forKey: key)) }

    @inline(__always)
    func string(forKey key: String) throws -> String? { defaults.string(forKey: key) }

    @inline(__always)
    func remove(forKey key: String) throws { defaults.removeObject(forKey: key) }

    func contains(_ key: String) throws -> Bool { defaults.object(forKey: key) != nil }

    func close() throws {
        guard defaults.synchronize() else { throw BenchError("UserDefaults: synchronize() failed for \(suite)") }
    }

    /// A new `UserDefaults` instance for the suite, then `dictionaryRepresentation()` (every
    /// domain, so the entries are filtered to this store's `int-` keys), summing the values.
    static func reopenAndLoad(directory: String) throws -> LoadedEntries {
        guard let defaults = UserDefaults(suiteName: suite(directory)) else {
            throw BenchError("UserDefaults(suiteName: \(suite(directory))) returned nil")
        }
        var result = LoadedEntries(count: 0, sum: 0)
        var sum: Int64 = 0
        for (key, value) in defaults.dictionaryRepresentation() where key.hasPrefix("int-") {
            guard let number = value as? Int else {
                throw BenchError("UserDefaults: value of \(key) is not an integer")
            }
            sum &+= Int64(number)
            result.count += 1
        }
        result.sum = sum
        return result
    }

    private static func suite(_ directory: String) -> String { "\(directory)/defaults" }
}
