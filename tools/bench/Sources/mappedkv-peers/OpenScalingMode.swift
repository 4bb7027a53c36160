import ArgumentParser
import Glibc
import MappedKV

/// `--lock flock|shared-memory`: the inter-process lock of the open-scaling bench's multi-process
/// MappedKV stores.
enum LockOption: String, CaseIterable, ExpressibleByArgument {
    case flock
    case sharedMemory = "shared-memory"
}

/// How the open-scaling bench opens MappedKV: multi-process with `flock` (`--lock flock`, the
/// default), multi-process with the shared-memory lock (`--lock shared-memory`) or single-process
/// (`--single-process`). The last two let the library read a store through its mappings (the
/// index file and the data file) instead of copying it, until the handle's first write;
/// multi-process with `flock` keeps the private copy.
///
/// The command leaves the choice in the environment before anything opens a store, as
/// ``IndexFileOption`` does, so that its children open their stores the same way.
enum OpenScalingMode: String, CaseIterable {
    case flock
    case sharedMemory = "shared-memory"
    case singleProcess = "single-process"

    /// Where the command leaves its choice for ``current``.
    static let environmentVariable = "MAPPEDKV_BENCH_OPEN_MODE"

    /// The choice the command left in the environment; `flock` when it left none.
    static let current: OpenScalingMode =
        getenv(environmentVariable).flatMap { OpenScalingMode(rawValue: String(cString: $0)) } ?? .flock

    /// The mode of `--lock` and `--single-process`.
    init(lock: LockOption, singleProcess: Bool) {
        self = singleProcess ? .singleProcess : lock == .sharedMemory ? .sharedMemory : .flock
    }

    var isMultiProcess: Bool { self != .singleProcess }

    /// The lock of a multi-process open (ignored by a single-process one).
    var processLock: ProcessLock { self == .sharedMemory ? .sharedMemory : .flock }

    /// The `mappedkv` tool's arguments that open a store in this mode, for the fresh processes.
    var toolArguments: [String] {
        switch self {
        case .flock: ["--multi-process"]
        case .sharedMemory: ["--multi-process", "--lock", "shared-memory"]
        case .singleProcess: []
        }
    }

    /// Whether the library may read the store through its mappings in this mode (once it has that
    /// mode, and with an index file): every mode but multi-process with `flock`.
    var mayReadThroughMappings: Bool { self != .flock }

    /// The mode in words, for the report.
    var summary: String {
        switch self {
        case .flock: "multi-process mode with the flock lock"
        case .sharedMemory: "multi-process mode with the shared-memory lock"
        case .singleProcess: "single-process mode"
        }
    }
}

/// A configuration of the open-scaling bench's MappedKV stores (``MappedKVStore`` over it is an
/// ``OpenScalingStore``).
protocol OpenScalingMappedKVVariant: MappedKVVariant {}

/// The stores of the open-scaling bench: opened as ``OpenScalingMode/current`` says (multi-process
/// with `flock` unless told), with or without the index file. The index file choice is set
/// either way, since the library's default is to keep the file.
enum OpenScalingVariant: OpenScalingMappedKVVariant {
    static let configuration: Configuration = {
        var configuration = Configuration(
            isMultiProcess: OpenScalingMode.current.isMultiProcess, processLock: OpenScalingMode.current.processLock,
            metrics: BenchMetrics.options, usesIndexFile: IndexFileOption.current == .on)
        configuration.cryptKey = EncryptionOption.key
        return configuration
    }()
}

/// The reference for the gets of the other modes: multi-process with `flock`, which always reads
/// the open's private copy, with the same index file choice.
enum OpenScalingFlockVariant: OpenScalingMappedKVVariant {
    static let configuration: Configuration = {
        var configuration = Configuration(
            isMultiProcess: true, metrics: BenchMetrics.options, usesIndexFile: IndexFileOption.current == .on)
        configuration.cryptKey = EncryptionOption.key
        return configuration
    }()
}
