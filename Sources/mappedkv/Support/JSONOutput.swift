import Foundation

/// Writes JSON for the `--json` options: one document per command run, keys sorted, so that the
/// shapes documented in docs/CLI.md are stable for scripts.
enum JSONOutput {
    /// `value` (dictionaries, arrays, strings, numbers, bools, `NSNull`) as one line of JSON.
    static func line(_ value: Any) throws -> String {
        let data = try JSONSerialization.data(
            withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
        return String(decoding: data, as: UTF8.self)
    }

    /// Prints `value` as one line of JSON on standard output.
    static func print(_ value: Any) throws {
        Swift.print(try line(value))
    }
}
