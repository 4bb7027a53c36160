/// The cache comparison as grouped bars: one group per workload, one bar (and colour) per design,
/// on a logarithmic axis of time (per operation, per 1 MiB value, or per call).
enum CacheChart {
    static func render(_ results: CacheResults, machine: Machine) -> SVG {
        let designs = results.designs
        let workloads = results.workloads
        let n = Format.grouped(Double(results.sizes.n))
        let notes =
            [
                "memory_*: MemoryCache (baseline: a dictionary behind a mutex) at its count limit of \(n) entries (each "
                    + "set evicts one; gets all hit); cache_memory_*: the same gets through Cache. disk_*: "
                    + "\(n) 100-byte values; disk_get right after a reopen (disk_open), so nothing is in the process's memory.",
                "large_*: \(results.sizes.largeValues) values of 1 MiB, per value; the plain file writes and reads one file "
                    + "per value (the floor). trim: \(Format.grouped(Double(results.sizes.trimEntries))) entries to "
                    + "half, least recently used first; statistics: count and bytes of the \(n) entries. No fsync anywhere.",
            ]
            + designs.filter { $0 != .plainFile && results.sizes.keyCount($0) < results.sizes.n }.map {
                "\($0.displayName) ran with N = \(Format.grouped(Double(results.sizes.keyCount($0)))) and a trim of "
                    + "\(Format.grouped(Double(results.sizes.trimCount($0)))) entries: its disk_open, trim and "
                    + "statistics bars cover fewer entries."
            }
        let noteLines = notes.flatMap { Format.wrap($0, width: 165) }
        // Wide enough for every group's label and bars (18 workloads and 6 designs in a full run).
        let width = max(1100, 110 + Double(workloads.count) * max(150, 16 * Double(designs.count)))
        let plotLeft = 90.0
        let plotRight = width - 20
        let plotTop = 150.0
        let plotBottom = 520.0
        let height = plotBottom + 62 + 16 * Double(noteLines.count)
        var svg = SVG(width: width, height: height)

        svg.text(
            "MappedKVCache vs SQLite + files, file per entry, a plain file and its baselines: time (log scale, lower is better)",
            x: width / 2, y: 28, size: 17, anchor: .middle, bold: true)
        svg.text(
            "N = \(n) keys, median of \(results.runs) round\(results.runs == 1 ? "" : "s"); \(machine.summary)",
            x: width / 2, y: 50, size: 12, anchor: .middle, fill: Palette.muted)

        var legendX = plotLeft
        for design in designs {
            svg.rect(x: legendX, y: 70, width: 14, height: 14, fill: design.colour)
            let label = design == .mappedkv ? "MappedKVCache (DiskCache; MemoryCache)" : results.heading(design)
            svg.text(label, x: legendX + 20, y: 82, size: 13)
            legendX += 40 + Double(label.count) * 7.6
        }

        let values = designs.flatMap { design in workloads.map { results.median(design, $0) } }
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
            "time (log scale)", x: 22, y: (plotTop + plotBottom) / 2, size: 13, anchor: .middle,
            fill: Palette.axis, rotation: -90)

        let groupWidth = (plotRight - plotLeft) / Double(max(workloads.count, 1))
        let barWidth = groupWidth * 0.8 / Double(max(designs.count, 1))
        for (group, workload) in workloads.enumerated() {
            // Only the designs that ran the workload, centred in the group.
            let present = designs.filter { results.median($0, workload).isFinite }
            let groupLeft = plotLeft + (Double(group) + 0.5) * groupWidth - Double(present.count) * barWidth / 2
            for (index, design) in present.enumerated() {
                let value = results.median(design, workload)
                guard value > 0 else { continue }
                let x = groupLeft + Double(index) * barWidth
                let top = scale.position(value)
                svg.rect(
                    x: x + 1, y: top, width: barWidth - 2, height: plotBottom - top, fill: design.colour,
                    tooltip: "\(design.displayName) \(workload.rawValue): \(Format.duration(nanoseconds: value))")
                svg.text(
                    Format.duration(nanoseconds: value), x: x + barWidth / 2 + 3.5, y: top - 4, size: 10, rotation: -90)
            }
            let center = plotLeft + (Double(group) + 0.5) * groupWidth
            svg.text(workload.rawValue, x: center, y: plotBottom + 20, size: 13, anchor: .middle, bold: true)
            if let note = workload.chartNote {
                svg.text(note, x: center, y: plotBottom + 36, size: 11, anchor: .middle, fill: Palette.muted)
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
