import Foundation

/// What the figures were measured on.
struct Machine {
    var cpu: String
    var cores: Int
    var memoryGiB: Double
    var kernel: String
    var swift: String

    static func current() -> Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let cpu =
            cpuinfo.split(separator: "\n")
            .first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let memoryKiB =
            meminfo.split(separator: "\n")
            .first { $0.hasPrefix("MemTotal:") }
            .flatMap { $0.split(separator: " ").dropFirst().first }
            .flatMap { Double($0) } ?? 0
        var names = utsname()
        uname(&names)
        let kernel = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        // tools/bench.sh passes the compiler's version line; run directly, the binary cannot know it.
        let swift = ProcessInfo.processInfo.environment["MAPPEDKV_BENCH_SWIFT_VERSION"] ?? "Swift (version not passed)"
        return Machine(
            cpu: cpu, cores: ProcessInfo.processInfo.activeProcessorCount, memoryGiB: memoryKiB / 1_048_576,
            kernel: kernel, swift: swift)
    }

    /// The 1, 5 and 15 minute load averages from /proc/loadavg: "0.12 0.30 0.25".
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        let fields = text.split(separator: " ").prefix(3)
        return fields.count == 3 ? fields.joined(separator: " ") : "unknown"
    }

    /// One line: "Intel(R) Xeon(R) Processor, 2 cores, 23.4 GiB, Linux 6.1.0, Swift 6.3.1".
    var summary: String {
        "\(cpu), \(cores) cores, \(String(format: "%.1f", memoryGiB)) GiB RAM, Linux \(kernel), \(swift)"
    }
}
