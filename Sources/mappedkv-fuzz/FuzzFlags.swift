import MappedKV
import MappedKVCrypto

/// The first byte of a fuzz input: how the store is opened and how the rest of the input becomes
/// its two files.
///
/// ```
/// bit  7     6 5      4 3        2          1 0
///      multi layout   decision   read-only  key
/// ```
struct FuzzFlags: Equatable, CustomStringConvertible {
    /// The encryption key the store is opened with. The keys are those of the MMKV-written vectors
    /// (Vectors/mmkv-2.4.2/README.md), so seeds made from the encrypted vectors decrypt.
    enum KeyChoice: UInt8, CaseIterable {
        case none = 0
        /// `MMKVKey0123456` (14 bytes, zero-padded), AES-128: the key of `b_crypt`.
        case vectorKey14 = 1
        /// `MMKVKey012345678` (16 bytes), AES-128: the key of `b16_crypt16`.
        case vectorKey16 = 2
        /// `MMKVKey0123456` zero-padded to 32 bytes, AES-256.
        case vectorKey14AES256 = 3

        var cryptKey: CryptKey? {
            switch self {
            case .none: nil
            case .vectorKey14: CryptKey(Array("MMKVKey0123456".utf8))
            case .vectorKey16: CryptKey(Array("MMKVKey012345678".utf8))
            case .vectorKey14AES256: CryptKey(Array("MMKVKey0123456".utf8), aes256: true)
            }
        }
    }

    /// What the recovery handler answers on the first open.
    enum DecisionMode: UInt8, CaseIterable {
        case recover = 0
        case discard = 1
        case fail = 2
        /// Whatever ``RecoveryDecision/default(for:)`` picks for the event.
        case libraryDefault = 3

        func decide(_ event: DamageEvent) -> RecoveryDecision {
            switch self {
            case .recover: .recover
            case .discard: .discard
            case .fail: .fail
            case .libraryDefault: .default(for: event)
            }
        }
    }

    /// How the bytes after the flags become the meta file and the data file (see ``StoreImage``).
    enum Layout: UInt8, CaseIterable {
        /// A 2-byte meta length, the meta file, then the data file, each exactly as given: any
        /// sizes, including files shorter than a header or a meta struct, and missing files.
        case split = 0
        /// A 112-byte meta struct in a one-page meta file; the data file is the rest, zero-padded
        /// to whole pages. No fix-ups: what MMKV's files look like, damage and all.
        case raw = 1
        /// As ``raw``, but the data region is plain text that the harness encrypts (with a key)
        /// and seals: the used size is set to the region given and the CRC to match. Reaches
        /// the decoder and the key checks past the CRC.
        case sealed = 2
        /// As ``sealed`` (encrypted, CRC of the whole region given, last-confirmed CRC set for its
        /// size), but the used size stays what the meta says: reaches the interrupted-append
        /// repair, the CRC-boundary search and the rollback to the last confirmed write-back.
        case torn = 3
    }

    var key: KeyChoice
    var isReadOnly: Bool
    var decision: DecisionMode
    var layout: Layout
    var isMultiProcess: Bool

    init(key: KeyChoice, isReadOnly: Bool, decision: DecisionMode, layout: Layout, isMultiProcess: Bool) {
        self.key = key
        self.isReadOnly = isReadOnly
        self.decision = decision
        self.layout = layout
        self.isMultiProcess = isMultiProcess
    }

    init(byte: UInt8) {
        key = KeyChoice(rawValue: byte & 0b11) ?? .none
        isReadOnly = byte & 0b100 != 0
        decision = DecisionMode(rawValue: (byte >> 3) & 0b11) ?? .recover
        layout = Layout(rawValue: (byte >> 5) & 0b11) ?? .split
        isMultiProcess = byte & 0x80 != 0
    }

    var byte: UInt8 {
        key.rawValue | (isReadOnly ? 0b100 : 0) | decision.rawValue << 3 | layout.rawValue << 5
            | (isMultiProcess ? 0x80 : 0)
    }

    var description: String {
        "key=\(key) \(isReadOnly ? "read-only" : "read-write") decision=\(decision) layout=\(layout)"
            + (isMultiProcess ? " multi-process" : "")
    }
}
