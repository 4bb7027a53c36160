import Foundation

/// Number formatting for the tables and the charts.
enum Format {
    /// An integer with thousands separators: 1234567 -> "1,234,567".
    static func grouped(_ value: Double) -> String {
        guard value.isFinite else { return "-" }
        let digits = String(Int(value.rounded()).magnitude)
        var out = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return value < 0 ? "-" + out : out
    }

    /// A ratio: "214x", "14.2x", "0.73x", "0.0012x".
    static func ratio(_ value: Double) -> String {
        guard value.isFinite else { return "-" }
        if value >= 100 { return String(format: "%.0fx", value) }
        if value >= 1 { return String(format: "%.1fx", value) }
        return value >= 0.01 ? String(format: "%.2fx", value) : String(format: "%.2gx", value)
    }

    /// A duration with a unit chosen for its size: "350 ns", "1.1 µs", "12 µs", "3.4 ms", "1.2 s".
    static func duration(nanoseconds value: Double) -> String {
        let units: [(Double, String)] = [(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1, "ns")]
        for (scale, unit) in units where value >= scale || unit == "ns" {
            let scaled = value / scale
            return scaled >= 10 || unit == "ns" ? "\(Int(scaled.rounded())) \(unit)" : oneDecimal(scaled) + " " + unit
        }
        return "-"
    }

    /// One decimal, dropped when it is zero: 1.25 -> "1.3", 1.0 -> "1".
    static func oneDecimal(_ value: Double) -> String {
        let text = String(format: "%.1f", value)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// Splits `text` into lines of at most `width` characters, at spaces.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ") {
            if !current.isEmpty && current.count + 1 + word.count > width {
                lines.append(current)
                current = ""
            }
            current += current.isEmpty ? String(word) : " " + word
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    /// Bytes in MiB with two decimals.
    static func mebibytes(_ bytes: Double) -> String { String(format: "%.2f", bytes / 1_048_576) }

    /// A number with a fixed count of decimals.
    static func fixed(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }
}
