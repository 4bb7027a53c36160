import MappedKV

/// Collects consecutive set and remove lines of an `apply` script and writes them as one
/// `MappedKV.batch`, so a run of N sets costs one lock and one append instead of N. The invariant:
/// the lines before a failing line stay applied, as if each line ran on its own. A batch that
/// fails writes nothing, so it is replayed line by line to apply the lines before the failing one
/// and report that line.
struct ScriptBatcher {
    /// A failure of one script line.
    struct LineFailure: Error {
        var line: Int
        var error: any Error
    }

    /// The most lines written as one batch.
    static let limit = 1_000

    private(set) var pending: [(operation: ScriptOperation, line: Int)] = []

    /// Queues `operation` if it can go into a batch (writing the queue once it is full); false if
    /// it cannot, and the caller must ``flush(to:aes256:)`` and run it alone.
    mutating func add(_ operation: ScriptOperation, line: Int, to store: MappedKV, aes256: Bool) throws -> Bool {
        guard operation.isBatchable else { return false }
        pending.append((operation, line))
        if pending.count >= Self.limit { try flush(to: store, aes256: aes256) }
        return true
    }

    /// Writes the queued lines as one batch; throws a ``LineFailure`` for the first line that fails.
    mutating func flush(to store: MappedKV, aes256: Bool) throws {
        guard !pending.isEmpty else { return }
        let lines = pending
        pending = []
        do {
            try store.batch { batch in
                for (operation, _) in lines { try operation.record(on: batch) }
            }
        } catch {
            // Nothing of the batch was written: apply the lines one by one to find the failing one.
            for (operation, line) in lines {
                do { try operation.apply(to: store, aes256: aes256) } catch {
                    throw LineFailure(line: line, error: error)
                }
            }
        }
    }
}

extension ScriptOperation {
    /// Whether the operation is a set or a remove, which a write batch can hold.
    var isBatchable: Bool {
        switch self {
        case .setInt32, .setUInt32, .setInt64, .setUInt64, .setBool, .setDouble, .setFloat, .setString, .setBytes,
            .remove:
            return true
        case .clear, .trim, .rekey, .incrementInt64:
            return false
        }
    }

    /// Records a set or remove on `batch` (other operations are not batchable and do nothing here).
    func record(on batch: MappedKV.WriteBatch) throws(MappedKVError) {
        switch self {
        case .setInt32(let k, let v): try batch.set(v, forKey: k)
        case .setUInt32(let k, let v): try batch.set(v, forKey: k)
        case .setInt64(let k, let v): try batch.set(v, forKey: k)
        case .setUInt64(let k, let v): try batch.set(v, forKey: k)
        case .setBool(let k, let v): try batch.set(v, forKey: k)
        case .setDouble(let k, let v): try batch.set(v, forKey: k)
        case .setFloat(let k, let v): try batch.set(v, forKey: k)
        case .setString(let k, let v): try batch.set(v, forKey: k)
        case .setBytes(let k, let v): try batch.set(v, forKey: k)
        case .remove(let k): try batch.removeValue(forKey: k)
        case .clear, .trim, .rekey, .incrementInt64: break
        }
    }
}
