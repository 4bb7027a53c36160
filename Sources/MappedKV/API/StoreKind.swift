// A store's kind: the mark by which a layer built on the store (one that encodes its own keys and
// values in it) claims a store as its own, so that neither it nor a plain open ever reads or
// writes a store of another kind as if it were theirs. The store knows no layer by name: a kind
// is a name and a version the layer chooses, kept in two reserved keys (docs/FORMAT.md 2.12).

/// The kind of a store that a layer above MappedKV owns: a name and the version of the layer's
/// encoding, written into the store when the layer first opens it empty, and checked at every open.
///
/// Set ``Configuration/storeKind`` to open a store as one of a kind:
/// - an empty store is marked with the kind (unless the open is read-only);
/// - a store marked with this kind opens, whatever version its marker holds (the layer reads it
///   from ``markerKey`` and decides);
/// - a store marked with another kind, or one that holds keys and no mark, is refused with
///   ``MappedKVError/wrongStoreKind(id:expected:found:)`` and left as it is.
///
/// An open without a kind (the default) refuses a marked store the same way, so plain keys are
/// never written into, or read as plain values from, a store whose keys a layer encodes.
///
/// The mark is two string values (section 2.5 of docs/FORMAT.md): ``markerKey`` (U+0001 and the
/// name) holds the version, and ``kindKey`` holds the name. Both start with U+0001, which no key
/// of a plain store or an MMKV program begins with in practice. MMKV processes sharing the file
/// see them as two ordinary keys.
///
/// ```swift
/// let kind = StoreKind(name: "com.example.journal", version: "1")
/// let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal").path
/// var configuration = Configuration()
/// configuration.storeKind = kind
/// let store = try MappedKV(id: "events", directory: directory, configuration: configuration)
/// let version = try store.string(forKey: kind.markerKey)  // "1"
/// ```
public struct StoreKind: Hashable, Sendable, CustomStringConvertible {
    /// The kind's name, unique to the layer that owns such stores (a reverse-DNS name, for example).
    public let name: String
    /// The version of the layer's encoding that a new store is marked with.
    public let version: String

    /// The most UTF-8 bytes of a name or a version.
    public static let maximumLength = 256

    /// The reserved key that holds the name of the kind of a marked store; an open without a
    /// kind looks for it alone, so its cost does not grow with the store.
    public static let kindKey = "\u{1}mappedkv.kind"

    /// A kind named `name`, whose new stores are marked with `version`. Both must be 1 to
    /// ``maximumLength`` bytes of UTF-8; the open checks them.
    public init(name: String, version: String) {
        self.name = name
        self.version = version
    }

    /// The reserved key that holds the version a store of this kind was marked with: U+0001
    /// followed by the name.
    public var markerKey: String { "\u{1}" + name }

    /// The kind's name.
    public var description: String { name }

    /// Throws if the name or the version cannot mark a store.
    func validate() throws(MappedKVError) {
        for (what, text) in [("name", name), ("version", version)] {
            guard (1...Self.maximumLength).contains(text.utf8.count) else {
                throw .invalidArgument(
                    "a store kind's \(what) must be 1 to \(Self.maximumLength) bytes of UTF-8, not \(text.utf8.count)")
            }
        }
        guard markerKey != Self.kindKey else {
            throw .invalidArgument("'\(name)' is reserved: it would make the kind's marker key the kind key itself")
        }
    }
}

extension MappedKVError {
    /// The text of ``wrongStoreKind(id:expected:found:)``: what the store is and what to do.
    static func wrongKindMessage(_ id: String, _ expected: String?, _ found: String?) -> String {
        switch (expected, found) {
        case (nil, let found?):
            "store '\(id)' is a '\(found)' store: a layer above MappedKV encodes its keys and marked it so; "
                + "open it through that layer, or set Configuration.storeKind to its kind to read its raw keys"
        case (let expected?, let found?):
            "store '\(id)' is a '\(found)' store, not a '\(expected)' store; nothing was changed"
        case (let expected?, nil):
            "store '\(id)' holds keys but is not marked as a '\(expected)' store: it was written by "
                + "another program; open it as a plain store"
        case (nil, nil):
            "store '\(id)' is of another kind than this open expects"
        }
    }
}
