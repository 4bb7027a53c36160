// `app.caches.use(.mappedKV(directory:))`: the providers that make a MappedKV directory the
// application's cache. Invariant: the directory is opened once per application, when the provider
// runs, and closed at shutdown; a directory that cannot be opened makes every cache call fail with
// ``MappedKVVaporError/directoryUnavailable(directory:reason:)`` rather than crash the app.

import Logging
import MappedKVCache
import Vapor

extension Application.Caches.Provider {
    /// The cache in the disk cache directory `directory`, shared live by every process of the host
    /// that uses the same directory.
    ///
    /// ```swift
    /// app.caches.use(.mappedKV(directory: "/var/cache/my-app"))
    /// ```
    ///
    /// - Parameters:
    ///   - directory: the directory; it is made when missing.
    ///   - configuration: the directory's limits, trim interval, encryption and default time to
    ///     live. When this application already opened the directory (for its sessions, say), the
    ///     first configuration stays.
    ///   - logger: where the directory logs (trace and debug only); the application's by default.
    public static func mappedKV(
        directory: String, configuration: DiskCacheConfiguration = DiskCacheConfiguration(), logger: Logger? = nil
    ) -> Self {
        .init { app in
            let disk = app.mappedKVDirectories.cache(
                directory: directory, configuration: configuration, logger: logger ?? app.logger)
            let entries = JSONEntries(disk: disk, prefix: MappedKVVaporCache.keyPrefix)
            app.caches.use { app in
                MappedKVVaporCache(entries: entries, eventLoop: app.eventLoopGroup.any())
            }
        }
    }

    /// The cache in `disk`, a directory the caller opened (to handle an error in opening it) and
    /// closes after the application shuts down.
    public static func mappedKV(_ disk: DiskCache) -> Self {
        .init { app in
            app.caches.use { app in MappedKVVaporCache(disk: disk, eventLoop: app.eventLoopGroup.any()) }
        }
    }
}
