// The store's kind marks (docs/FORMAT.md 2.12) as the store keeps them: the API's open checks
// and writes them (API/MappedKV+StoreKind.swift); the store renews them when a change of its own
// would otherwise make them expire.
extension StoreCore {
    /// Writes the store's kind marks again with no expiry time, after key expiry was turned on:
    /// that gave every record the default lifetime, and a mark that expired would turn the store
    /// into an unmarked one. A store without the kind key has nothing to renew.
    func renewStoreKindMarks() throws(MappedKVError) {
        guard let name = try value(forKey: StoreKind.kindKey, as: String.self) else { return }
        for (key, value) in [
            (StoreKind.kindKey, name), ("\u{1}" + name, try value(forKey: "\u{1}" + name, as: String.self)),
        ] {
            if let value { try set(value, forKey: key, expiresAfter: 0) }
        }
    }
}
