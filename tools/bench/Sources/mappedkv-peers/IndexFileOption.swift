import ArgumentParser
import Glibc
import MappedKV

/// `--index-file on|off`: whether MappedKV opens its stores with a persisted index file, the
/// feature the open-scaling bench is the baseline for.
///
/// The command leaves the choice in the environment before anything opens a store, as `--clock`
/// does, so that the children it starts (the second process, the writer) open their stores the
/// same way without being told.
enum IndexFileOption: String, CaseIterable, ExpressibleByArgument {
    case on, off

    /// Where the command leaves its choice for ``current``.
    static let environmentVariable = "MAPPEDKV_BENCH_INDEX_FILE"

    /// The choice the command left in the environment; off when it left none.
    static let current: IndexFileOption =
        getenv(environmentVariable).flatMap { IndexFileOption(rawValue: String(cString: $0)) } ?? .off

    /// Whether this build of MappedKV can open a store with an index file. It cannot until
    /// `Configuration` has `usesIndexFile`. Wiring it is three edits, all in this file: this turns
    /// true, ``OpenScalingVariant/configuration`` passes `usesIndexFile: current == .on`, and
    /// ``toolArguments`` gives `--no-index-file` for `off`. Both choices are set explicitly, since
    /// the index file is meant to be on by default.
    static let isAvailable = false

    /// The `mappedkv` tool's arguments that open a store as this choice says, for MappedKV's
    /// fresh processes: none while the library has no index file.
    var toolArguments: [String] { [] }

    /// Fails for `on` in a build without the option, so that a run never reports figures without
    /// an index file under a heading that says it had one.
    func validate() throws {
        guard self == .off || Self.isAvailable else {
            throw ValidationError(
                "--index-file on: this build of MappedKV has no index file option (Configuration.usesIndexFile)")
        }
    }
}

/// The stores of the open-scaling bench: multi-process mode with the default `flock` lock, the
/// way processes of a server share one store, with or without the index file.
enum OpenScalingVariant: MappedKVVariant {
    static let configuration = Configuration(isMultiProcess: true, metrics: BenchMetrics.options)
}
