import Foundation
import Logging
import MappedKVFormat

// The `@Stored` property wrapper. Invariant: the property holds no copy of the value; every get
// reads the store and every set writes it, with the same bytes `set(_:forKey:)` writes for the
// type, so the property, the store's getters and other processes always agree. Errors a property
// cannot throw are logged, never swallowed silently, and the projected value throws them.

/// A property backed by one key of a store: reading the property reads the store, assigning it
/// writes the store.
///
/// ```swift
/// let store = try MappedKV(id: "app", directory: directory)
/// @Stored("launches", in: store) var launches = 0
/// launches += 1                      // reads, then writes the key "launches"
/// try $launches.write(10)            // the same write, with its error
/// ```
///
/// Any value with a native payload (`PayloadCodable`) or any `Codable` value can be
/// stored, with the bytes ``KeyValueAccess/set(_:forKey:)`` writes for it. An optional property
/// (`@Stored("name", in: store) var name: String?`) maps `nil` to an absent key: assigning `nil`
/// removes the key.
///
/// **Errors.** A property cannot throw, so `wrappedValue` reads an absent key as the default and
/// reports a failing read (the key holds another type, the store was closed) or write (read-only
/// store, full disk) through the store's logger, at error level, then returns the default or
/// drops the write. Code that must see errors uses the projected value, `$name`, whose ``read()``,
/// ``write(_:)`` and ``remove()`` throw ``MappedKVError``.
///
/// The wrapper is `Sendable`: it holds the store, the key and the default, and every access goes
/// through the thread-safe store, so it may be read and written from any thread. Use it on a
/// property of a class or struct, or on a local variable. Swift does not allow property wrappers on
/// global variables; a global `let` of the wrapper itself works and is safe under Swift 6's checking,
/// since writes are `nonmutating`:
///
/// ```swift
/// let launches = Stored(key: "launches", in: store, default: 0)
/// launches.wrappedValue += 1
/// ```
@propertyWrapper
public struct Stored<Value: Sendable>: Sendable {
    /// The key the property is stored under.
    public let key: String
    /// The store holding the key.
    public let store: MappedKV
    /// What the property reads as while the key is absent.
    public let defaultValue: Value
    private let load: @Sendable (MappedKV, String) throws(MappedKVError) -> Value?
    private let save: @Sendable (MappedKV, String, Value) throws(MappedKVError) -> Void

    private init(
        key: String, store: MappedKV, defaultValue: Value,
        load: @escaping @Sendable (MappedKV, String) throws(MappedKVError) -> Value?,
        save: @escaping @Sendable (MappedKV, String, Value) throws(MappedKVError) -> Void
    ) {
        self.key = key
        self.store = store
        self.defaultValue = defaultValue
        self.load = load
        self.save = save
    }

    /// The stored value, or the default while the key is absent; errors are logged (see above).
    public var wrappedValue: Value {
        get {
            do { return try read() } catch {
                store.logWrapperError(error, key: key, operation: "read")
                return defaultValue
            }
        }
        nonmutating set {
            do { try write(newValue) } catch { store.logWrapperError(error, key: key, operation: "write") }
        }
    }

    /// The wrapper itself, for the throwing ``read()``, ``write(_:)`` and ``remove()``.
    public var projectedValue: Stored<Value> { self }

    /// The stored value, or the default if the key is absent.
    public func read() throws(MappedKVError) -> Value {
        try load(store, key) ?? defaultValue
    }

    /// Stores `newValue` under the key (for an optional property, `nil` removes the key).
    public func write(_ newValue: Value) throws(MappedKVError) {
        try save(store, key, newValue)
    }

    /// Removes the key, so the property reads as its default again.
    public func remove() throws(MappedKVError) {
        try store.removeValue(forKey: key)
    }
}

extension Stored where Value: Codable {
    /// A property stored under `key` in `store`, reading as `wrappedValue` while the key is absent.
    /// The value is stored natively if its type has a native payload, otherwise as JSON.
    public init(wrappedValue: Value, _ key: String, in store: MappedKV) {
        self.init(key: key, in: store, default: wrappedValue)
    }

    /// A stored `Codable` value, for use as a plain `let` (see the type's discussion).
    public init(key: String, in store: MappedKV, default defaultValue: Value) {
        // An optional is recognised by its type at run time, whichever initializer overload
        // resolution picked: its nil is an absent key, never JSON `null`.
        if Value.self is any StoredOptional.Type {
            self.init(
                key: key, store: store, defaultValue: defaultValue,
                load: { (store, key) throws(MappedKVError) in
                    guard let optional = Value.self as? any StoredOptional.Type else { return nil }
                    return try Self.load(optional, store, key)
                },
                save: { (store, key, value) throws(MappedKVError) in
                    guard let optional = Value.self as? any StoredOptional.Type else { return }
                    try Self.save(optional, value, store, key)
                })
            return
        }
        self.init(
            key: key, store: store, defaultValue: defaultValue,
            load: { (store, key) throws(MappedKVError) in try store.value(forKey: key, as: Value.self) },
            save: { (store, key, value) throws(MappedKVError) in try store.set(value, forKey: key) })
    }

    /// Loads an optional `Value` (opened as `O`, the same type): nil if the key is absent.
    private static func load<O: StoredOptional>(
        _ type: O.Type, _ store: MappedKV, _ key: String
    ) throws(MappedKVError) -> Value? {
        guard let loaded = try O.loadOptional(from: store, key: key) else { return nil }
        return loaded as? Value
    }

    /// Saves an optional `Value` (opened as `O`, the same type); nil removes the key.
    private static func save<O: StoredOptional>(
        _ type: O.Type, _ value: Value, _ store: MappedKV, _ key: String
    ) throws(MappedKVError) {
        if let same = value as? O {
            try same.saveOptional(to: store, key: key)
        } else {
            try store.removeValue(forKey: key)
        }
    }
}

extension Stored where Value: PayloadCodable {
    /// A property stored under `key` in `store` as its native payload, reading as `wrappedValue`
    /// while the key is absent.
    public init(wrappedValue: Value, _ key: String, in store: MappedKV) {
        self.init(key: key, in: store, default: wrappedValue)
    }

    /// A stored native value, for use as a plain `let` (see the type's discussion).
    public init(key: String, in store: MappedKV, default defaultValue: Value) {
        self.init(
            key: key, store: store, defaultValue: defaultValue,
            load: { (store, key) throws(MappedKVError) in try store.value(forKey: key, as: Value.self) },
            save: { (store, key, value) throws(MappedKVError) in try store.set(value, forKey: key) })
    }
}

extension Stored where Value: PayloadCodable & Codable {
    /// A property stored under `key` in `store` as its native payload (the overload for types that
    /// are both `PayloadCodable` and `Codable`).
    public init(wrappedValue: Value, _ key: String, in store: MappedKV) {
        self.init(key: key, in: store, default: wrappedValue)
    }

    /// A stored native value, for use as a plain `let` (see the type's discussion).
    public init(key: String, in store: MappedKV, default defaultValue: Value) {
        self.init(
            key: key, store: store, defaultValue: defaultValue,
            load: { (store, key) throws(MappedKVError) in try store.value(forKey: key, as: Value.self) },
            save: { (store, key, value) throws(MappedKVError) in try store.set(value, forKey: key) })
    }
}

extension Stored {
    /// An optional property stored under `key` in `store`: `nil` while the key is absent, and
    /// assigning `nil` removes the key. (With an initial value, `@Stored("k", in: store) var v:
    /// String? = "x"`, the `Codable` initializer does the same and reads an absent key as "x".)
    public init<Wrapped: Codable & Sendable>(_ key: String, in store: MappedKV) where Value == Wrapped? {
        self.init(key: key, in: store, default: nil)
    }
}

/// An optional as a ``Stored`` value: `nil` is an absent key. Only `Optional` conforms.
protocol StoredOptional {
    /// The value of `key`, or nil (the outer one) if the key is absent.
    static func loadOptional(from store: MappedKV, key: String) throws(MappedKVError) -> Self?
    /// Stores the wrapped value, or removes `key` for nil.
    func saveOptional(to store: MappedKV, key: String) throws(MappedKVError)
}

extension Optional: StoredOptional where Wrapped: Codable {
    static func loadOptional(from store: MappedKV, key: String) throws(MappedKVError) -> Wrapped?? {
        guard let value = try store.value(forKey: key, as: Wrapped.self) else { return nil }
        return .some(value)
    }

    func saveOptional(to store: MappedKV, key: String) throws(MappedKVError) {
        if let self { try store.set(self, forKey: key) } else { try store.removeValue(forKey: key) }
    }
}

extension MappedKV {
    /// Logs an error a ``Stored`` property could not throw, through the store's logger.
    func logWrapperError(_ error: MappedKVError, key: String, operation: String) {
        let logger = shared.core.withLock { core in core.logger }
        logger.error(
            "a @Stored property could not \(operation) its key; use the projected value ($property) to see errors",
            metadata: ["key": "\(key)", "error": "\(error)"])
    }
}
