import Foundation
import MappedKV

// Declaring a bucket's secondary indexes. Stored indexes are written to the collection store, so
// every process and the CLI see and maintain them; closure indexes live in this process only.
extension Bucket {
    /// Adds an index over `source` (a JSON value path, a metadata item, `created` or `modified`),
    /// stored in the collection store so that every process and the CLI see it, and builds it from
    /// the bucket's entries. Adding an index that already exists with the same definition does
    /// nothing.
    ///
    /// - Throws: ``CollectionError/uniqueConflict(bucket:index:key:existingKey:)`` if `unique` and
    ///   two entries already share a value (nothing is added), or
    ///   ``CollectionError/invalidIndex(bucket:name:reason:)`` if the name is in use with another
    ///   definition.
    public func addIndex(
        _ name: String, type: IndexType, source: IndexSource, unique: Bool = false
    )
        throws(CollectionError)
    {
        let definition = IndexDefinition(name: name, type: type, source: source, isUnique: unique)
        let bucket = self.name
        try indexes.inSection { (transaction) throws(CollectionError) in
            let existing = indexes.state.withLock { $0.buckets[ExactString(bucket)]?.indexes[name]?.definition }
            if existing == definition { return }
            if existing != nil {
                throw .invalidIndex(bucket: bucket, name: name, reason: "the name is in use with another definition")
            }
            try install(definition, closure: nil, transaction)
            let json: Data
            do { json = try JSONEncoder().encode(definition) } catch {
                throw .invalidIndex(bucket: bucket, name: name, reason: "\(error)")
            }
            do throws(MappedKVError) {
                try transaction.set(
                    EntryPayload(bytes: [UInt8](json)), forKey: CollectionKey.definitionKey(bucket: bucket, name: name))
            } catch {
                throw .store(error)
            }
        }
    }

    /// Adds an index whose value `extract` computes from each entry, in this process only: other
    /// processes and the CLI do not see it, and it is built again by every process that declares it.
    public func addIndex(
        _ name: String, type: IndexType, unique: Bool = false,
        _ extract: @escaping @Sendable (Entry<Value>) -> IndexValue?
    ) throws(CollectionError) {
        let definition = IndexDefinition(name: name, type: type, source: .valuePath(["(closure)"]), isUnique: unique)
        let bucket = self.name
        let serializer = self.serializer
        let closure = ClosureIndex(definition: definition) { record, key in
            guard let value = try? serializer.decode(record.valueBytes, bucket: bucket, key: key) else { return nil }
            return extract(
                Entry(
                    bucket: bucket, key: key, value: value, metadata: record.metadata,
                    created: EntryRecord.date(record.createdMilliseconds),
                    modified: EntryRecord.date(record.modifiedMilliseconds)))
        }
        try indexes.inSection { (transaction) throws(CollectionError) in
            if indexes.state.withLock({ $0.buckets[ExactString(bucket)]?.indexes[name] }) != nil {
                throw .invalidIndex(bucket: bucket, name: name, reason: "the name is in use")
            }
            try install(definition, closure: closure, transaction)
        }
    }

    /// Builds `definition` from the bucket's entries and adds it, inside the exclusive section;
    /// throws, adding nothing, if it is unique and two entries share a value.
    private func install(
        _ definition: IndexDefinition, closure: ClosureIndex?, _ transaction: MappedKV.Transaction
    ) throws(CollectionError) {
        let bucket = self.name
        let entries = try CollectionIndexes.entries(of: bucket, transaction)
        let conflict = indexes.state.withLock { state in
            let set = state.buckets[ExactString(bucket)] ?? BucketIndexSet(bucket: bucket)
            let conflict = set.add(definition, closure: closure, entries: entries)
            if conflict == nil {
                state.buckets[ExactString(bucket)] = set
                state.changes &+= 1
            }
            return conflict
        }
        if let (first, second) = conflict {
            throw .uniqueConflict(bucket: bucket, index: definition.name, key: second, existingKey: first)
        }
    }

    /// The bucket's stored indexes, sorted by name (closure indexes are not listed).
    public func indexDefinitions() throws(CollectionError) -> [IndexDefinition] {
        try indexes.synchronize()
        let bucket = self.name
        return indexes.state.withLock { state in
            guard let set = state.buckets[ExactString(bucket)] else { return [] }
            return set.definitions.filter { set.closures[$0.name] == nil }
        }
    }
}
