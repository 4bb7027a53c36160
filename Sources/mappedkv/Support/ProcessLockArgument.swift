import ArgumentParser
import MappedKV

/// `--lock flock|shared-memory`: which inter-process lock a multi-process store takes.
extension ProcessLock: ExpressibleByArgument {
    /// Parses `flock` or `shared-memory`.
    public init?(argument: String) {
        switch argument {
        case "flock": self = .flock
        case "shared-memory": self = .sharedMemory
        default: return nil
        }
    }

    /// The option's values, for help and completion.
    public static var allValueStrings: [String] { ["flock", "shared-memory"] }

    /// The option's spelling of this value.
    var argument: String { self == .flock ? "flock" : "shared-memory" }
}
