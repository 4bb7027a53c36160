// The key prefixes that keep apart what shares one directory: the cache's entries, the sessions,
// and the same for each application that names a namespace of its own.
// Invariant: the prefix is injective in (area, namespace). An area's prefix without a namespace is
// `<area>/`; with one it is `<area>.<namespace, '%' and '/' percent-encoded>/`, so it ends at its
// first '/' and no key of one namespace (or of none) starts with another's prefix, whatever the
// keys and namespaces hold.

/// The key prefix of one area (the cache, the sessions) of one application's namespace.
struct KeyNamespace: Hashable, Sendable {
    /// Put before every key of the area.
    let prefix: String

    /// The prefix of `area` (which holds no '/') in `namespace`; nil is the default namespace,
    /// whose prefix is the one the first release wrote.
    init(area: String, namespace: String?) {
        guard let namespace else {
            prefix = area + "/"
            return
        }
        let encoded = namespace.replacingOccurrences(of: "%", with: "%25")
            .replacingOccurrences(of: "/", with: "%2F")
        prefix = area + "." + encoded + "/"
    }
}
