import Foundation

/// The scaling run as two log-log panels against N: time per key (set, get, overwrite, reopen
/// and load, full write-back) and bytes (live data, data file, resident memory after a load, split
/// into its heap part and the mapped store files).
enum ScalingChart {
    struct Series {
        var name: String
        var values: [Double]
    }

    static func render(_ results: ScalingResults, machine: Machine) -> SVG {
        let width = 1000.0
        let height = 560.0
        var svg = SVG(width: width, height: height)
        let sizes = results.sizes.sorted()
        svg.text(
            "MappedKV scaling with the number of keys N (log-log)", x: width / 2, y: 28, size: 17, anchor: .middle,
            bold: true)
        svg.text(
            "Int32 keys, median of \(results.runs) round\(results.runs == 1 ? "" : "s"); \(machine.summary)",
            x: width / 2, y: 50, size: 12, anchor: .middle, fill: Palette.muted)

        let times = [
            Series(name: "set", values: sizes.map { n in results.median(n) { $0.setNanoseconds } }),
            Series(name: "get", values: sizes.map { n in results.median(n) { $0.getNanoseconds } }),
            Series(
                name: "overwrite (set again)", values: sizes.map { n in results.median(n) { $0.overwriteNanoseconds } }),
            Series(
                name: "reopen + load, per key",
                values: sizes.map { n in results.median(n) { $0.reopenLoadNanoseconds } / Double(n) }),
            Series(
                name: "full write-back (trim), per key",
                values: sizes.map { n in results.median(n) { $0.trimNanoseconds } / Double(n) }),
        ]
        let bytes = [
            Series(
                name: "live records",
                values: sizes.map { n in results.median(n) { Double($0.afterFill.liveBytes) } / mebibyte }),
            Series(
                name: "data file after N sets",
                values: sizes.map { n in results.median(n) { Double($0.afterFill.fileBytes) } / mebibyte }),
            Series(
                name: "VmRSS growth from a load (child process)",
                values: sizes.map { n in results.median(n) { Double($0.residentKiB.total) } / 1024 }),
            Series(
                name: "its anonymous part (heap: copy of the region + index)",
                values: sizes.map { n in results.median(n) { Double($0.residentKiB.anonymous) } / 1024 }),
            Series(
                name: "its resident pages of the mapped store files",
                values: sizes.map { n in results.median(n) { Double($0.storeFilesResidentKiB) } / 1024 }),
        ]
        panel(
            &svg, left: 90, top: 90, width: 350, height: 330, title: "time per key", axisLabel: "time (log scale)",
            sizes: sizes, series: times, format: { Format.duration(nanoseconds: $0) })
        panel(
            &svg, left: 590, top: 90, width: 350, height: 330, title: "memory and disk", axisLabel: "MiB (log scale)",
            sizes: sizes, series: bytes, format: mebibytesLabel)
        return svg
    }

    private static let mebibyte = 1_048_576.0

    /// A decade of MiB: "0.01 MiB", "0.1 MiB", "1 MiB", "10 MiB".
    private static func mebibytesLabel(_ value: Double) -> String {
        value >= 1 ? "\(Format.grouped(value)) MiB" : "\(String(format: "%g", value)) MiB"
    }

    private static func panel(
        _ svg: inout SVG, left: Double, top: Double, width: Double, height: Double, title: String, axisLabel: String,
        sizes: [Int], series: [Series], format: (Double) -> String
    ) {
        let right = left + width
        let bottom = top + height
        svg.text(title, x: left + width / 2, y: top - 12, size: 14, anchor: .middle, bold: true)
        let x = LogScale(covering: sizes.map(Double.init), pixelLow: left, pixelHigh: right)
        let y = LogScale(covering: series.flatMap(\.values), pixelLow: bottom, pixelHigh: top)
        for tick in y.minorTicks {
            svg.line(x1: left, y1: y.position(tick), x2: right, y2: y.position(tick), stroke: Palette.minorGrid)
        }
        for decade in y.decades {
            svg.line(x1: left, y1: y.position(decade), x2: right, y2: y.position(decade), stroke: Palette.grid)
            svg.text(format(decade), x: left - 8, y: y.position(decade) + 4, size: 11, anchor: .end, fill: Palette.axis)
        }
        for decade in x.decades {
            svg.line(x1: x.position(decade), y1: top, x2: x.position(decade), y2: bottom, stroke: Palette.grid)
            svg.text(
                "N = \(Format.grouped(decade))", x: x.position(decade), y: bottom + 18, size: 11, anchor: .middle,
                fill: Palette.axis)
        }
        svg.line(x1: left, y1: top, x2: left, y2: bottom, stroke: Palette.axis)
        svg.line(x1: left, y1: bottom, x2: right, y2: bottom, stroke: Palette.axis)
        svg.text(
            axisLabel, x: left - 62, y: (top + bottom) / 2, size: 12, anchor: .middle, fill: Palette.axis, rotation: -90
        )
        svg.text(
            "keys N (log scale)", x: left + width / 2, y: bottom + 38, size: 12, anchor: .middle, fill: Palette.axis)

        for (index, line) in series.enumerated() {
            let colour = Palette.colours[index % Palette.colours.count]
            let points = zip(sizes, line.values).filter { $0.1.isFinite && $0.1 > 0 }
                .map { (x.position(Double($0.0)), y.position($0.1)) }
            svg.polyline(points, stroke: colour)
            for (point, (n, value)) in zip(points, zip(sizes, line.values)) {
                svg.circle(
                    x: point.0, y: point.1, radius: 3.5, fill: colour,
                    tooltip: "\(line.name.trimmingCharacters(in: .whitespaces)), N = \(n): \(format(value))")
            }
            // Legend under the panel.
            let legendY = bottom + 62 + Double(index) * 17
            svg.line(x1: left, y1: legendY - 4, x2: left + 22, y2: legendY - 4, stroke: colour, width: 3)
            svg.text(line.name, x: left + 30, y: legendY, size: 12)
        }
    }
}
