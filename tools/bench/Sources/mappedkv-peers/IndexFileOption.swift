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

    /// The choice the command left in the environment; on (the library's default) when it left none.
    static let current: IndexFileOption =
        getenv(environmentVariable).flatMap { IndexFileOption(rawValue: String(cString: $0)) } ?? .on

    /// Whether this build of MappedKV can open a store with an index file (`Configuration`'s
    /// `usesIndexFile`). Kept so that a build of older library code can set it false again and
    /// refuse `on` instead of timing stores without the file under a heading that says "on".
    static let isAvailable = true

    /// The `mappedkv` tool's arguments that open a store as this choice says, for MappedKV's
    /// fresh processes: the tool, like the library, keeps the index file unless told not to.
    var toolArguments: [String] { self == .off ? ["--no-index-file"] : [] }

    /// Fails for `on` in a build without the option, so that a run never reports figures without
    /// an index file under a heading that says it had one.
    func validate() throws {
        guard self == .off || Self.isAvailable else {
            throw ValidationError(
                "--index-file on: this build of MappedKV has no index file option (Configuration.usesIndexFile)")
        }
    }
}
