/// What opening a store would do with its files, as ``StoreInspector`` predicts it.
public enum LoadVerdict: Sendable, Equatable, CustomStringConvertible {
    /// The files load as they are.
    case sound
    /// The files load after a repair that loses nothing (an append interrupted between its two
    /// meta stores, or the size held in the header), written by the next read-write open.
    case losslessRepair(String)
    /// The files are damaged: what the recovery handler would be told.
    case damaged(DamageEvent)
    /// A crash lost writes made after the last durability point; the next read-write open
    /// rewrites the kept state (``CrashLossReport``).
    case crashLoss(CrashLossReport)
    /// The store looks encrypted and no key was given: its meta file holds an IV and the records
    /// do not load as plain text, so an open without a key throws
    /// ``MappedKVError/missingCryptKey(id:)``. The event is what reading the files as plain finds,
    /// which is what the recovery handler of an open with ``Configuration/treatsStoreAsPlain``
    /// would be told.
    case missingCryptKey(DamageEvent)

    /// `sound`, what a lossless repair would do, the damage found, or that a key is missing.
    public var description: String {
        switch self {
        case .sound: "sound"
        case .losslessRepair(let what): "repairable without loss: \(what)"
        case .damaged(let event): "damaged: \(event.reason)"
        case .crashLoss(let report): "writes lost to a crash: \(report)"
        case .missingCryptKey:
            "encrypted, no key given: the meta file holds an IV and the records do not load without a key"
        }
    }
}
