/// What kind of damage a load found.
public enum DamageKind: String, Sendable, Equatable, CustomStringConvertible {
    /// The CRC of the data region differs from the one in the meta file.
    case crcMismatch = "CRC mismatch"
    /// The used size recorded in the meta does not fit in the data file.
    case lengthError = "length error"
    /// The CRC matches but the records do not decode.
    case undecodable = "undecodable data"
    /// The records do not decode in a way that points to the wrong encryption key (or a key for a
    /// plain store, or none for an encrypted one).
    case wrongKeySuspected = "wrong key suspected"
    /// The meta file is empty, zeroed or too short while the data file holds data.
    case metaMissing = "meta missing"

    /// The kind as a phrase, e.g. `CRC mismatch`.
    public var description: String { rawValue }
}

/// What a recovery would keep and drop: the longest prefix of the data region that can be
/// verified, and the records past it.
public struct RecoveryProposal: Sendable, Equatable, CustomStringConvertible {
    /// What vouches for the kept prefix.
    public enum Basis: String, Sendable, Equatable, CustomStringConvertible {
        /// The running CRC at a record boundary equals the meta's current CRC: nothing is lost.
        case currentCRC = "current CRC"
        /// The running CRC equals the CRC of the last full write-back (MMKV's `lastConfirmed`).
        case lastConfirmed = "last confirmed write-back"
        /// The size and CRC equal a checkpoint MappedKV recorded in the meta file: a recent write
        /// or the last durability point (docs/FORMAT.md 3.5).
        case checkpoint = "recorded checkpoint"
        /// The CRC covers the region but decoding stops at a bad record; the records before it are kept.
        case decodablePrefix = "records before the first undecodable one"
        /// Nothing could be verified; recovery keeps an empty store.
        case nothing = "nothing verifiable"

        /// The basis as a phrase, e.g. `last confirmed write-back`.
        public var description: String { rawValue }
    }

    /// What vouches for the kept prefix.
    public var basis: Basis
    /// The kept prefix of the data region, in bytes (the holder included).
    public var keptBytes: Int
    /// Records in the kept prefix, deletions included.
    public var keptRecords: Int
    /// Live keys after the kept prefix.
    public var keptKeys: Int
    /// The bytes past the kept prefix that are dropped: up to the size the meta claims, or, when
    /// the meta's own CRC ends the data at the kept prefix (``Basis/currentCRC``), the records
    /// written after it that were never committed (0 if there are none).
    public var droppedBytes: Int
    /// Records that still decode in the dropped bytes. They cannot be verified, so they are not kept.
    public var droppedRecords: Int
    /// The keys of those records, sorted: each loses its newer values, falling back to its value
    /// in the kept prefix or disappearing.
    public var droppedKeys: [String]

    /// Creates a proposal.
    public init(
        basis: Basis, keptBytes: Int, keptRecords: Int, keptKeys: Int,
        droppedBytes: Int, droppedRecords: Int, droppedKeys: [String]
    ) {
        self.basis = basis
        self.keptBytes = keptBytes
        self.keptRecords = keptRecords
        self.keptKeys = keptKeys
        self.droppedBytes = droppedBytes
        self.droppedRecords = droppedRecords
        self.droppedKeys = droppedKeys
    }

    /// Whether recovering this way loses nothing the meta recorded as committed: nothing is
    /// dropped, or only records the meta's CRC shows were never committed.
    public var isLossless: Bool { droppedBytes == 0 || basis == .currentCRC }

    /// What is kept and dropped, in one line: keys, records and bytes.
    public var description: String {
        var text = "keep \(keptKeys) keys (\(keptRecords) records, \(keptBytes) bytes; \(basis))"
        text += ", drop \(droppedBytes) bytes"
        if droppedRecords > 0 {
            text += " holding \(droppedRecords) unverifiable records of \(droppedKeys.count) keys"
        }
        return text
    }
}

/// Damage found while loading a store, handed to the ``Configuration/recoveryHandler`` to decide
/// what happens.
public struct DamageEvent: Sendable, Equatable, CustomStringConvertible {
    /// The store's ID.
    public var storeID: String
    /// The kind of damage.
    public var kind: DamageKind
    /// What was found, in detail.
    public var reason: CorruptionReason
    /// What ``RecoveryDecision/recover`` would keep and drop.
    public var proposal: RecoveryProposal
    /// Whether the store is open read-only, in which case a recovery happens in memory only.
    public var isReadOnly: Bool

    /// Creates an event.
    public init(
        storeID: String, kind: DamageKind, reason: CorruptionReason, proposal: RecoveryProposal, isReadOnly: Bool
    ) {
        self.storeID = storeID
        self.kind = kind
        self.reason = reason
        self.proposal = proposal
        self.isReadOnly = isReadOnly
    }

    /// The store, the kind of damage, what was found and what recovery would keep and drop.
    public var description: String { "store '\(storeID)': \(kind): \(reason); recovery would \(proposal)" }
}

/// What to do about damage found at load.
public enum RecoveryDecision: String, Sendable, Equatable, CustomStringConvertible {
    /// Load the proposal's verified prefix. A read-write store first copies both damaged files
    /// aside (`<id>.corrupt-<UTC time>` and its `.crc`), then rewrites itself from the kept records.
    case recover
    /// Start empty. A read-write store first copies both damaged files aside.
    case discard
    /// Throw ``MappedKVError/corrupted(id:reason:)`` and leave the files exactly as they are.
    case fail

    /// The decision when no handler is configured: recover from CRC and length damage (a verified
    /// prefix exists and the damaged files are kept aside), fail on anything that could be a wrong
    /// key or a lost meta file, since the data may well be intact.
    public static func `default`(for event: DamageEvent) -> RecoveryDecision {
        switch event.kind {
        case .crcMismatch, .lengthError: .recover
        case .undecodable, .wrongKeySuspected, .metaMissing: .fail
        }
    }

    /// The decision's name: `recover`, `discard` or `fail`.
    public var description: String { rawValue }
}

/// Decides what happens to a damaged store; called at most once per load, with the files locked.
public typealias RecoveryHandler = @Sendable (DamageEvent) -> RecoveryDecision

/// What a load did about damage.
public struct RecoveryReport: Sendable, Equatable, CustomStringConvertible {
    /// What was found and proposed.
    public var event: DamageEvent
    /// What the handler (or the default) decided.
    public var decision: RecoveryDecision
    /// The copies of the damaged files (data file first), empty if none were made.
    public var quarantinedFiles: [String]

    /// Creates a report.
    public init(event: DamageEvent, decision: RecoveryDecision, quarantinedFiles: [String]) {
        self.event = event
        self.decision = decision
        self.quarantinedFiles = quarantinedFiles
    }

    /// The event, the decision and where the damaged files were copied, in one line.
    public var description: String {
        var text = "\(event); decided: \(decision)"
        if !quarantinedFiles.isEmpty { text += "; damaged files copied to \(quarantinedFiles.joined(separator: ", "))" }
        return text
    }
}
