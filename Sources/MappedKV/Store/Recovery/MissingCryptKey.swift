import MappedKVFormat

/// The rule that keeps a load without a key from reading an encrypted store as a damaged plain
/// one (docs/FORMAT.md 7.5a).
///
/// Without a key, the ciphertext of an encrypted store is read as plain records. It almost never
/// decodes, but when it happens to decode as a record or two, a recovery would keep those
/// ciphertext bytes as plain keys and values, rewrite the store as a plain one, and the right key
/// would no longer open it. MMKV writes a random IV into the meta of every encrypted store, so a
/// meta that holds one is taken as encrypted whenever a load without a key finds damage: the load
/// stops with ``MappedKVError/missingCryptKey(id:)`` before the damage policy is consulted and
/// before anything is copied or written. A store that decodes without a key still loads, since a
/// store MMKV decrypted keeps its stale IV (MappedKV's rewrites of a plain store zero it); only the caller can
/// say that a damaged store with an IV is plain (``Configuration/treatsStoreAsPlain``).
enum MissingCryptKey {
    /// Whether `meta` (normalized) records an IV: version 2 or more with an IV that is not all
    /// zeros. Below version 2 the IV bytes mean nothing (docs/FORMAT.md 3.2, 4).
    static func metaHoldsIV(_ meta: MetaInfo) -> Bool {
        meta.version >= .randomIV && meta.iv != .zero
    }

    /// Whether damage found by a load with `key` must be reported as a missing key rather than
    /// handed to the damage policy.
    ///
    /// The finding's kept region carries the normalized meta's version and IV, whatever the damage
    /// (the blank and short meta cases included), so the decision needs nothing else.
    static func applies(to finding: DamageFinding, key: CryptKey?, treatsStoreAsPlain: Bool) -> Bool {
        key == nil && !treatsStoreAsPlain && metaHoldsIV(finding.kept.meta)
    }

    /// Throws ``MappedKVError/missingCryptKey(id:)`` when ``applies(to:key:treatsStoreAsPlain:)``.
    static func check(
        _ finding: DamageFinding, key: CryptKey?, treatsStoreAsPlain: Bool, id: String
    ) throws(MappedKVError) {
        if applies(to: finding, key: key, treatsStoreAsPlain: treatsStoreAsPlain) { throw .missingCryptKey(id: id) }
    }
}
