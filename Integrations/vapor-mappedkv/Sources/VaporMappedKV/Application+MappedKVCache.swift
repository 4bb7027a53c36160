// `app.caches.use(.mappedKV(directory:))`: the providers that make a MappedKV directory the
// application's cache, in a namespace of its own when several applications share the directory. Invariant: the directory is opened once per application, when the provider
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
    ///     Its `metrics` options make the directory report through swift-metrics.
    ///   - namespace: the namespace of this application's entries, so that several applications
    ///     can share the directory without seeing each other's entries (their limits are the
    ///     directory's, shared); nil (the default) is the namespace of the first release's entries.
    ///   - logger: where the directory logs (trace and debug only); the application's by default.
    public static func mappedKV(
        directory: String, configuration: DiskCacheConfiguration = DiskCacheConfiguration(),
        namespace: String? = nil, logger: Logger? = nil
    ) -> Self {
        .init { app in
            let disk = app.mappedKVDirectories.cache(
                directory: directory, configuration: configuration, logger: logger ?? app.logger)
            let entries = JSONEntries(
                disk: disk, prefix: KeyNamespace(area: MappedKVVaporCache.area, namespace: namespace).prefix)
            app.caches.use { app in
                MappedKVVaporCache(entries: entries, eventLoop: app.eventLoopGroup.any())
            }
        }
    }

    /// The cache in `disk`, a directory the caller opened (to handle an error in opening it) and
    /// closes after the application shuts down, in `namespace` (nil: the default).
    public static func mappedKV(_ disk: DiskCache, namespace: String? = nil) -> Self {
        .init { app in
            app.caches.use { app in
                MappedKVVaporCache(disk: disk, namespace: namespace, eventLoop: app.eventLoopGroup.any())
            }
        }
    }
}
