import Foundation
import MappedKVFormat
import Synchronization

@testable import MappedKV

/// A workload run once with every write to the store's files recorded: what the explorer makes
/// crash states of, and the model each state is held to.
struct ExplorerRecording {
    var writes: [FileWrite] = []
    /// `acknowledgedAt[i]`: how many writes were made when operation `i` returned.
    var acknowledgedAt: [Int] = []
    /// `states[i]`: the contents after `i` operations (`states[0]`: before the first).
    var states: [[String: [UInt8]]] = [[:]]
    /// `keys[i]`: the encryption key in effect after `i` operations.
    var keys: [CryptKey?] = [nil]
    /// The durability points: once `writes` writes were made, the first `operations` operations
    /// were durable.
    var durabilityPoints: [(writes: Int, operations: Int)] = []
    /// The clock the checker opens with, when the workload uses key expiry.
    var clock: ExpiryClock = .system
    /// The time the checker's clock reads, for filtering expired entries from the states.
    var checkTime: UInt32?

    /// How many operations had returned once `count` writes were made.
    func acknowledged(afterWrites count: Int) -> Int { acknowledgedAt.prefix { $0 <= count }.count }

    /// How many operations a durability point had covered once `count` writes were made.
    func durable(afterWrites count: Int) -> Int {
        durabilityPoints.last { $0.writes <= count }?.operations ?? 0
    }

    /// The states a crash after `count` writes may open as: from the last durability point up to
    /// the operation that was under way, as the checker's clock sees them.
    func allowedStates(afterWrites count: Int) -> ArraySlice<[String: [UInt8]]> {
        let acknowledged = acknowledged(afterWrites: count)
        return states[durable(afterWrites: count)...min(acknowledged + 1, states.count - 1)]
    }

    /// The keys a crash after `count` writes may need: the one in effect and, during a rekey, the next.
    func candidateKeys(afterWrites count: Int) -> [CryptKey?] {
        let acknowledged = acknowledged(afterWrites: count)
        let first = keys[min(acknowledged, keys.count - 1)]
        let next = keys[min(acknowledged + 1, keys.count - 1)]
        return first == next ? [first] : [first, next]
    }
}

/// Builds an ``ExplorerRecording`` while a workload runs.
final class ExplorerRecorder {
    let recorder = WriteRecorder()
    let dataPath: String
    private(set) var recording = ExplorerRecording()
    /// The key the store has after the operations so far.
    var key: CryptKey?

    init(directory: String, id: String = "s", key: CryptKey?) {
        dataPath = "\(directory)/\(id)"
        self.key = key
        recording.keys = [key]
        WriteRecorder.register(recorder, for: dataPath)
    }

    deinit { WriteRecorder.unregister(dataPath) }

    /// Records that an operation returned, leaving `contents`.
    func acknowledge(_ contents: [String: [UInt8]]) {
        recording.acknowledgedAt.append(recorder.count)
        recording.states.append(contents)
        recording.keys.append(key)
    }

    /// Sets the state before the first operation: what opening the store leaves, for a layer
    /// whose open writes to an empty store.
    func replaceInitialState(_ contents: [String: [UInt8]]) { recording.states[0] = contents }

    /// Records that every operation so far is durable (a `sync()` or `close()` returned).
    func durabilityPoint() {
        recording.durabilityPoints.append((recorder.count, recording.acknowledgedAt.count))
    }

    /// The finished recording.
    func finish(clock: ExpiryClock = .system, checkTime: UInt32? = nil) -> ExplorerRecording {
        var result = recording
        result.writes = recorder.writes
        result.clock = clock
        result.checkTime = checkTime
        return result
    }
}

/// A store's live contents; with `expiry`, each payload followed by its expiry time (u32, or
/// nothing without one), so that a state can be viewed at a later time.
func explorerContents(of store: MappedKV, expiry: Bool) throws -> [String: [UInt8]] {
    guard expiry else { return try contents(of: store) }
    var result: [String: [UInt8]] = [:]
    for entry in try store.exportedEntries() {
        var bytes = entry.payload
        if let time = entry.expiresAt { withUnsafeBytes(of: time.littleEndian) { bytes += $0 } }
        result[entry.key] = bytes + [entry.expiresAt == nil ? 0 : 1]
    }
    return result
}

/// `state` as a store whose clock reads `time` shows it: entries expired by then left out.
func explorerView(_ state: [String: [UInt8]], at time: UInt32?) -> [String: [UInt8]] {
    guard let time else { return state }
    return state.filter { _, bytes in
        guard bytes.last == 1, bytes.count >= 5 else { return true }
        let expiry = bytes[(bytes.count - 5)..<(bytes.count - 1)].enumerated().reduce(UInt32(0)) {
            $0 | UInt32($1.element) << (8 * UInt32($1.offset))
        }
        return expiry == 0 || expiry > time
    }
}
