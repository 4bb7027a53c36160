// `app.sessions.use(.mappedKV(directory:configuration:))`: the providers that keep the
// application's sessions in the sessions store of a MappedKV directory. Invariants: the store is
// opened once per application, when the provider runs, and closed at shutdown (after the tidy has
// stopped); the first release's sessions in the directory are moved into it before any request is
// served; a store that cannot be opened makes every session call fail rather than crash the app.

import Logging
import MappedKV
import MappedKVCache
import Vapor

extension Application.Sessions.Provider {
    /// Sessions in the sessions store of `directory`, shared live by every process of the host that
    /// uses the same directory.
    ///
    /// ```swift
    /// app.sessions.use(.mappedKV(directory: "/var/lib/my-app"))
    /// app.middleware.use(app.sessions.middleware)
    /// ```
    ///
    /// The store is `vapor-sessions` in the directory, apart from the cache's files, so no limit of
    /// the cache ever evicts a session. When the directory holds sessions of the first release
    /// (entries of its disk cache), they move into the store now, with what remained of their
    /// lifetime. Expired sessions are removed when the application boots and then every
    /// ``MappedKVSessionsConfiguration/tidyInterval``, by one process at a time.
    ///
    /// - Parameters:
    ///   - directory: the directory; it is made when missing. It may be the cache's.
    ///   - configuration: the sessions' lifetime, namespace, encryption, metrics, logging and tidy.
    public static func mappedKV(
        directory: String, configuration: MappedKVSessionsConfiguration = MappedKVSessionsConfiguration()
    ) -> Self {
        .init { app in
            let logger = configuration.loggingLabel.map { Logger(label: $0) } ?? app.logger
            let records = app.mappedKVDirectories.sessionsStore(
                directory: directory, configuration: configuration, logger: logger
            ).map { store in
                SessionRecords(
                    store: store, keys: KeyNamespace(area: SessionRecords.area, namespace: configuration.namespace),
                    lifetime: configuration.storedLifetime)
            }
            if case .success(let records) = records {
                do {
                    _ = try LegacySessionMigration.run(
                        directory: directory, into: records, configuration: configuration, logger: logger)
                } catch {
                    logger.error(
                        "could not move the first release's sessions into the sessions store",
                        metadata: ["directory": "\(directory)", "error": "\(error)"])
                }
                app.lifecycle.use(
                    SessionTidy(
                        store: records.store, interval: configuration.tidyInterval,
                        stepKeys: configuration.tidyStepKeys, logger: logger))
            }
            let driver = MappedKVSessions(records: records)
            app.sessions.use { _ in driver }
        }
    }

    /// Sessions in the sessions store of `directory`, lasting `lifetime` after their last use.
    @available(
        *, deprecated,
        message: "sessions are records of a store of their own now: use mappedKV(directory:configuration:)"
    )
    public static func mappedKV(
        directory: String, lifetime: Duration, configuration: DiskCacheConfiguration = DiskCacheConfiguration(),
        logger: Logger? = nil
    ) -> Self {
        var sessions = MappedKVSessionsConfiguration(lifetime: lifetime, cryptKey: configuration.cryptKey)
        sessions.legacyCacheConfiguration = configuration
        return .mappedKV(directory: directory, configuration: sessions)
    }

    /// Sessions in the sessions store of the directory of `disk`, lasting `lifetime` after their
    /// last use.
    @available(
        *, deprecated,
        message: "sessions are records of a store of their own now: use mappedKV(directory:configuration:)"
    )
    public static func mappedKV(_ disk: DiskCache, lifetime: Duration = MappedKVSessions.defaultLifetime) -> Self {
        var sessions = MappedKVSessionsConfiguration(lifetime: lifetime, cryptKey: disk.configuration.cryptKey)
        sessions.legacyCacheConfiguration = disk.configuration
        return .mappedKV(directory: disk.directory, configuration: sessions)
    }
}
