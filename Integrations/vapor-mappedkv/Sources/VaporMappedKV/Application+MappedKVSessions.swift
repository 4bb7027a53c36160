// `app.sessions.use(.mappedKV(directory:))`: the providers that keep the application's sessions in
// a MappedKV directory. Invariant: the directory is opened once per application (shared with the
// cache when both name it), when the provider runs, and closed at shutdown; a directory that cannot
// be opened makes every session call fail rather than crash the app.

import Logging
import MappedKVCache
import Vapor

extension Application.Sessions.Provider {
    /// Sessions in the disk cache directory `directory`, shared live by every process of the host
    /// that uses the same directory.
    ///
    /// ```swift
    /// app.sessions.use(.mappedKV(directory: "/var/cache/my-app"))
    /// app.middleware.use(app.sessions.middleware)
    /// ```
    ///
    /// - Parameters:
    ///   - directory: the directory; it is made when missing. It may be the cache's: the two keep
    ///     their entries apart.
    ///   - lifetime: how long a session lasts after the last request that used it; keep it in step
    ///     with the cookie's expiry in `app.sessions.configuration`.
    ///   - configuration: the directory's limits, trim interval and encryption. When this
    ///     application already opened the directory, the first configuration stays.
    ///   - logger: where the directory logs (trace and debug only); the application's by default.
    public static func mappedKV(
        directory: String, lifetime: Duration = MappedKVSessions.defaultLifetime,
        configuration: DiskCacheConfiguration = DiskCacheConfiguration(), logger: Logger? = nil
    ) -> Self {
        .init { app in
            let disk = app.mappedKVDirectories.cache(
                directory: directory, configuration: configuration, logger: logger ?? app.logger)
            let driver = MappedKVSessions(
                entries: JSONEntries(disk: disk, prefix: MappedKVSessions.keyPrefix), lifetime: lifetime)
            app.sessions.use { _ in driver }
        }
    }

    /// Sessions in `disk`, a directory the caller opened (to handle an error in opening it) and
    /// closes after the application shuts down.
    public static func mappedKV(_ disk: DiskCache, lifetime: Duration = MappedKVSessions.defaultLifetime) -> Self {
        .init { app in
            let driver = MappedKVSessions(disk: disk, lifetime: lifetime)
            app.sessions.use { _ in driver }
        }
    }
}
