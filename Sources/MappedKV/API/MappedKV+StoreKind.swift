// The store-kind check of an open (docs/FORMAT.md 2.12). The invariant: an open whose kind does
// not match the store's mark throws before it writes anything, so a refused store is left exactly
// as it was; and a store gets a mark only while it is empty, inside the exclusive section, so two
// processes opening one store with different kinds (or one with none) cannot both claim it.

extension MappedKV {
    /// What the marker keys of the store say, for an open with `kind` (nil: a plain open).
    enum KindCheck: Equatable {
        /// The store is of the open's kind, or neither is marked.
        case matches
        /// The store is of the open's kind, marked by an earlier release with the version key
        /// alone: a writable open adds the kind key.
        case lacksKindKey
        /// The store is empty and unmarked: a writable open marks it.
        case unmarkedAndEmpty
    }

    /// Checks the store's kind against the configuration's, then turns key expiry on if the
    /// configuration asks for it, then marks an empty store with the kind. Throws, having written
    /// nothing, when the kinds differ.
    func openAsConfiguredKind() throws(MappedKVError) {
        guard let kind = configuration.storeKind else {
            // Read through the core: the open's own read is not one of the caller's operations.
            let found = try withCore { (core) throws(MappedKVError) -> String? in
                try core.value(forKey: StoreKind.kindKey, as: String.self)
            }
            if let found {
                throw .wrongStoreKind(id: location.id, expected: nil, found: found)
            }
            if let keyExpiry = configuration.keyExpiry { try applyKeyExpiryAtOpen(keyExpiry) }
            return
        }
        guard !configuration.isReadOnly else {
            _ = try Self.checkKind(kind, of: self, id: location.id)
            if let keyExpiry = configuration.keyExpiry { try applyKeyExpiryAtOpen(keyExpiry) }
            return
        }
        try exclusively { (transaction) throws(MappedKVError) in
            let check = try Self.checkKind(kind, of: transaction, id: location.id)
            if let keyExpiry = configuration.keyExpiry { try applyKeyExpiryAtOpen(keyExpiry) }
            try mark(transaction, as: kind, check)
        }
    }

    /// What `access`'s marker keys say for an open with `kind`; throws when the store is of
    /// another kind, or holds keys and no mark.
    static func checkKind(
        _ kind: StoreKind, of access: some KeyValueAccess, id: String
    ) throws(MappedKVError) -> KindCheck {
        let found = try access.string(forKey: StoreKind.kindKey)
        if let found, found != kind.name {
            throw .wrongStoreKind(id: id, expected: kind.name, found: found)
        }
        if try access.contains(kind.markerKey) { return found == nil ? .lacksKindKey : .matches }
        if found != nil { return .matches }
        guard try access.count == 0 else { throw .wrongStoreKind(id: id, expected: kind.name, found: nil) }
        return .unmarkedAndEmpty
    }

    /// Writes the marker keys `check` says are missing. They never expire (see
    /// `StoreCore.renewStoreKindMarks()`).
    private func mark(_ transaction: Transaction, as kind: StoreKind, _ check: KindCheck) throws(MappedKVError) {
        let marks: [(key: String, value: String)]
        switch check {
        case .matches: marks = []
        case .lacksKindKey: marks = [(StoreKind.kindKey, kind.name)]
        case .unmarkedAndEmpty: marks = [(kind.markerKey, kind.version), (StoreKind.kindKey, kind.name)]
        }
        for (key, value) in marks {
            if isKeyExpiryEnabled {
                try transaction.set(value, forKey: key, expiresAfter: .zero)
            } else {
                try transaction.set(value, forKey: key)
            }
        }
    }
}
