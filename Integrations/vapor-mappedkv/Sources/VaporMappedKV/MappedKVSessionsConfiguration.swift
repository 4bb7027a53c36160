// How the sessions store of `app.sessions.use(.mappedKV(directory:configuration:))` is opened and
// looked after. Invariant: every field has a default that suits a production app, so
// `MappedKVSessionsConfiguration()` is a complete configuration.

import Logging
import MappedKV
import MappedKVCache

/// How MappedKV keeps an application's sessions.
///
/// ```swift
/// var sessions = MappedKVSessionsConfiguration()
/// sessions.lifetime = .seconds(24 * 60 * 60)
/// sessions.namespace = "shop"
/// sessions.metrics = MetricsOptions(labelPrefix: "shop.sessions")
/// app.sessions.use(.mappedKV(directory: "/var/lib/my-app", configuration: sessions))
/// ```
public struct MappedKVSessionsConfiguration: Sendable {
    /// One week: the lifetime of the cookie that Vapor's default `SessionsConfiguration` sets.
    public static let defaultLifetime: Duration = .seconds(7 * 24 * 60 * 60)

    /// How long a session lasts after the last request that used it (one week by default). Keep
    /// it in step with the cookie's expiry in `app.sessions.configuration`.
    ///
    /// The store counts expiry in whole seconds, rounded up: a session lasts its lifetime and less
    /// than a second more, never less. A lifetime of zero or less is taken as one second.
    public var lifetime: Duration
    /// The namespace of this application's sessions, so that several applications can keep their
    /// sessions in one directory without seeing each other's; nil (the default) is the namespace
    /// of the first release's sessions. Give the cache the same namespace.
    public var namespace: String?
    /// The key that encrypts the sessions store (AES-128-CFB, as MMKV's); nil for a plain one.
    /// The sessions that the first release kept in an encrypted `DiskCache` are read with it too.
    public var cryptKey: CryptKey?
    /// Report the store's operations through swift-metrics under these options' label prefix;
    /// nil (the default) reports nothing.
    public var metrics: MetricsOptions?
    /// The label of the logger the store and the tidy log to (debug and above); nil (the default)
    /// uses the application's logger.
    public var loggingLabel: String?
    /// How often expired sessions are removed from the store, after the removal that runs when
    /// the application boots; nil removes them at boot only. One process of those sharing the
    /// directory tidies at a time. An expired session is a miss at once either way: tidying only
    /// gives its bytes back.
    public var tidyInterval: Duration?
    /// About how many keys one tidy step looks at, in one exclusive section, before a pause.
    public var tidyStepKeys: Int
    /// The clock that decides when a session has expired: the system's by default; tests set one
    /// they move by hand.
    public var clock: ExpiryClock
    /// How the first release's providers opened the directory's disk cache, which the upgrade
    /// opens the same way to move the sessions it kept; nil: with ``cryptKey`` and the defaults.
    var legacyCacheConfiguration: DiskCacheConfiguration?

    /// A configuration with the defaults, each of which can be changed by its argument.
    public init(
        lifetime: Duration = MappedKVSessionsConfiguration.defaultLifetime, namespace: String? = nil,
        cryptKey: CryptKey? = nil, metrics: MetricsOptions? = nil, loggingLabel: String? = nil,
        tidyInterval: Duration? = .seconds(60 * 60), tidyStepKeys: Int = 2048, clock: ExpiryClock = .system
    ) {
        self.lifetime = lifetime
        self.namespace = namespace
        self.cryptKey = cryptKey
        self.metrics = metrics
        self.loggingLabel = loggingLabel
        self.tidyInterval = tidyInterval
        self.tidyStepKeys = tidyStepKeys
        self.clock = clock
    }

    /// The lifetime the store is given: at least one second, since the store takes zero as never.
    var storedLifetime: Duration { max(lifetime, .seconds(1)) }
}
