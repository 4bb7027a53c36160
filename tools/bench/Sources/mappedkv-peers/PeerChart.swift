/// The peer comparison as grouped bars: one group per workload, one bar (and colour) per store,
/// on a logarithmic axis of time per operation.
enum PeerChart {
    static func render(_ results: PeerResults, machine: Machine) -> SVG {
        let stores = results.stores
        let workloads = Workload.allCases
        let notes =
            [
                "set_int32: N sets of Int32 i under \"int-<i>\"; set_string: N sets of \"string-<i>\" under \"str-<i>\"; gets read them back "
                    + "(values checked); remove: the N int keys.",
                "reopen_load: close, reopen and load a store of N Int32 keys, divided by N. MappedKV indexes every record at open; "
                    + "SQLite and LMDB scan every row; UserDefaults reads dictionaryRepresentation().",
            ]
            + stores.filter { (results.keyCounts[$0] ?? results.n) < results.n }.map {
                "\($0.displayName) ran with N = \(Format.grouped(Double(results.keyCounts[$0] ?? 0))) (each set and remove searches its keys linearly); "
                    + "at N = \(Format.grouped(Double(results.n))) it would be slower still."
            }
        let noteLines = notes.flatMap { Format.wrap($0, width: 165) }
        let width = 1000.0
        // The top leaves room for the tallest bar's value, written upwards.
        let plotLeft = 90.0
        let plotRight = width - 20
        let plotTop = 150.0
        let plotBottom = 520.0
        let height = plotBottom + 62 + 16 * Double(noteLines.count)
        var svg = SVG(width: width, height: height)

        svg.text(
            "MappedKV vs SQLite, LMDB and UserDefaults: time per operation (log scale, lower is better)",
            x: width / 2, y: 28, size: 17, anchor: .middle, bold: true)
        svg.text(
            "N = \(Format.grouped(Double(results.n))) keys, median of \(results.runs) round\(results.runs == 1 ? "" : "s"); \(machine.summary)",
            x: width / 2, y: 50, size: 12, anchor: .middle, fill: Palette.muted)

        // Legend, one row.
        var legendX = plotLeft
        for kind in stores {
            svg.rect(x: legendX, y: 70, width: 14, height: 14, fill: kind.colour)
            let label = results.heading(kind)
            svg.text(label, x: legendX + 20, y: 82, size: 13)
            legendX += 40 + Double(label.count) * 7.2
        }

        let values = stores.flatMap { kind in workloads.map { results.perOperation(kind, $0) } }
        let scale = LogScale(covering: values, pixelLow: plotBottom, pixelHigh: plotTop)
        for tick in scale.minorTicks {
            let y = scale.position(tick)
            svg.line(x1: plotLeft, y1: y, x2: plotRight, y2: y, stroke: Palette.minorGrid)
        }
        for decade in scale.decades {
            let y = scale.position(decade)
            svg.line(x1: plotLeft, y1: y, x2: plotRight, y2: y, stroke: Palette.grid)
            svg.text(
                Format.duration(nanoseconds: decade), x: plotLeft - 8, y: y + 4, size: 12, anchor: .end,
                fill: Palette.axis)
        }
        svg.line(x1: plotLeft, y1: plotTop, x2: plotLeft, y2: plotBottom, stroke: Palette.axis)
        svg.line(x1: plotLeft, y1: plotBottom, x2: plotRight, y2: plotBottom, stroke: Palette.axis)
        svg.text(
            "time per operation (log scale)", x: 22, y: (plotTop + plotBottom) / 2, size: 13, anchor: .middle,
            fill: Palette.axis, rotation: -90)

        let groupWidth = (plotRight - plotLeft) / Double(workloads.count)
        let barWidth = groupWidth * 0.8 / Double(max(stores.count, 1))
        for (group, workload) in workloads.enumerated() {
            let groupLeft = plotLeft + Double(group) * groupWidth + groupWidth * 0.1
            for (index, kind) in stores.enumerated() {
                let value = results.perOperation(kind, workload)
                guard value.isFinite, value > 0 else { continue }
                let x = groupLeft + Double(index) * barWidth
                let top = scale.position(value)
                svg.rect(
                    x: x + 1, y: top, width: barWidth - 2, height: plotBottom - top,
                    fill: kind.colour,
                    tooltip: "\(kind.displayName) \(workload.rawValue): \(Format.duration(nanoseconds: value))")
                // Upright labels collide with six bars to a group; these run up from the bar's top.
                svg.text(
                    Format.duration(nanoseconds: value), x: x + barWidth / 2 + 3.5, y: top - 4, size: 10, rotation: -90)
            }
            let center = plotLeft + (Double(group) + 0.5) * groupWidth
            svg.text(workload.rawValue, x: center, y: plotBottom + 20, size: 13, anchor: .middle, bold: true)
            if !workload.isPerOperation {
                svg.text(
                    "(per key loaded)", x: center, y: plotBottom + 36, size: 11, anchor: .middle, fill: Palette.muted)
            }
        }

        var noteY = plotBottom + 66
        for line in noteLines {
            svg.text(line, x: 30, y: noteY, size: 11, fill: Palette.muted)
            noteY += 16
        }
        return svg
    }
}
