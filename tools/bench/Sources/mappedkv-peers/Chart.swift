import Foundation

/// A hand-written SVG document: rectangles, lines, text and polylines, nothing else.
struct SVG {
    let width: Double
    let height: Double
    private var elements: [String] = []

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
        rect(x: 0, y: 0, width: width, height: height, fill: "#ffffff")
    }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String, tooltip: String? = nil) {
        let shape = "<rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"\(fill)\""
        if let tooltip {
            elements.append("\(shape)><title>\(Self.escape(tooltip))</title></rect>")
        } else {
            elements.append("\(shape)/>")
        }
    }

    mutating func line(
        x1: Double, y1: Double, x2: Double, y2: Double, stroke: String, width: Double = 1, dashed: Bool = false
    ) {
        elements.append(
            "<line x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\" stroke=\"\(stroke)\" "
                + "stroke-width=\"\(n(width))\"\(dashed ? " stroke-dasharray=\"4 3\"" : "")/>")
    }

    mutating func polyline(_ points: [(Double, Double)], stroke: String, width: Double = 2) {
        let list = points.map { "\(n($0.0)),\(n($0.1))" }.joined(separator: " ")
        elements.append(
            "<polyline points=\"\(list)\" fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"\(n(width))\"/>")
    }

    mutating func circle(x: Double, y: Double, radius: Double, fill: String, tooltip: String? = nil) {
        let shape = "<circle cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(radius))\" fill=\"\(fill)\""
        elements.append(tooltip.map { "\(shape)><title>\(Self.escape($0))</title></circle>" } ?? "\(shape)/>")
    }

    enum Anchor: String { case start, middle, end }

    mutating func text(
        _ string: String, x: Double, y: Double, size: Double = 12, anchor: Anchor = .start,
        bold: Bool = false, fill: String = "#222222", rotation: Double? = nil
    ) {
        var attributes =
            "x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(n(size))\" text-anchor=\"\(anchor.rawValue)\" fill=\"\(fill)\""
        if bold { attributes += " font-weight=\"bold\"" }
        if let rotation { attributes += " transform=\"rotate(\(n(rotation)) \(n(x)) \(n(y)))\"" }
        elements.append("<text \(attributes)>\(Self.escape(string))</text>")
    }

    var rendered: String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(width))\" height=\"\(n(height))\" "
            + "viewBox=\"0 0 \(n(width)) \(n(height))\" font-family=\"Helvetica, Arial, sans-serif\">\n"
            + elements.joined(separator: "\n") + "\n</svg>\n"
    }

    func write(to path: String) throws {
        try rendered.write(toFile: path, atomically: true, encoding: .utf8)
    }

    private func n(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    static func escape(_ string: String) -> String {
        string.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// A base-10 logarithmic axis from one power of ten to another, mapped onto a pixel range.
struct LogScale {
    let low: Double
    let high: Double
    let pixelLow: Double
    let pixelHigh: Double

    /// The smallest whole-decade range holding every finite positive value.
    init(covering values: [Double], pixelLow: Double, pixelHigh: Double) {
        let usable = values.filter { $0.isFinite && $0 > 0 }
        let minimum = usable.min() ?? 1
        let maximum = usable.max() ?? 10
        let lowExponent = floor(log10(minimum))
        let highExponent = max(ceil(log10(maximum)), lowExponent + 1)
        low = pow(10, lowExponent)
        high = pow(10, highExponent)
        self.pixelLow = pixelLow
        self.pixelHigh = pixelHigh
    }

    func position(_ value: Double) -> Double {
        let fraction = (log10(max(value, low)) - log10(low)) / (log10(high) - log10(low))
        return pixelLow + fraction * (pixelHigh - pixelLow)
    }

    /// Every power of ten from `low` to `high`.
    var decades: [Double] {
        stride(from: log10(low), through: log10(high), by: 1).map { pow(10, $0.rounded()) }
    }

    /// 2x and 5x every decade, for light grid lines.
    var minorTicks: [Double] {
        decades.dropLast().flatMap { [2 * $0, 5 * $0] }
    }
}

/// The colours of the charts, one per store or series, distinguishable in print and by most
/// colour-blind readers (blue, orange, green, purple, grey).
enum Palette {
    static let colours = ["#1f5fa8", "#e07b00", "#2f9e44", "#8e44ad", "#6c757d"]
    static let grid = "#e3e3e3"
    static let minorGrid = "#f1f1f1"
    static let axis = "#555555"
    static let muted = "#666666"
}
