// The disk cache directories an application opened through the providers, one `DiskCache` per
// directory path, kept in the application's storage and closed when the application shuts down.
// Invariant: within one application a directory is opened at most once, so the cache and the
// sessions driver of one directory share one instance (one background trim timer, one set of
// coalesced access times); the first configuration given for a directory is the one it opens with.

import Logging
import MappedKVCache
import Synchronization
import Vapor

/// The directories opened for one application, by path.
final class OpenDirectories: Sendable {
    /// Each opened path's cache, or why it could not be opened.
    private let opened = Mutex<[String: Result<DiskCache, MappedKVVaporError>]>([:])

    /// The cache of `directory`, opened with `configuration` unless this application already
    /// opened it; a failure to open is returned, not thrown, so that a provider (which cannot
    /// throw) hands it to every later call.
    func cache(
        directory: String, configuration: DiskCacheConfiguration, logger: Logger
    ) -> Result<DiskCache, MappedKVVaporError> {
        opened.withLock { opened in
            if let existing = opened[directory] { return existing }
            let result: Result<DiskCache, MappedKVVaporError>
            do {
                let disk = try DiskCache(directory: directory, configuration: configuration, logger: logger)
                logger.debug("opened MappedKV directory", metadata: ["directory": "\(directory)"])
                result = .success(disk)
            } catch {
                logger.debug("could not open MappedKV directory", metadata: ["directory": "\(directory)"])
                result = .failure(.directoryUnavailable(directory: directory, reason: String(describing: error)))
            }
            opened[directory] = result
            return result
        }
    }

    /// Closes every directory opened here; later calls on them throw `CacheError.closed`.
    func closeAll() {
        let caches = opened.withLock { opened in opened.values.compactMap { try? $0.get() } }
        for cache in caches { cache.close() }
    }
}

extension Application {
    /// The application's opened directories, made on first use and closed at shutdown.
    var mappedKVDirectories: OpenDirectories {
        let lock = locks.lock(for: OpenDirectoriesKey.self)
        lock.lock()
        defer { lock.unlock() }
        if let existing = storage[OpenDirectoriesKey.self] { return existing }
        let directories = OpenDirectories()
        storage.set(OpenDirectoriesKey.self, to: directories, onShutdown: { $0.closeAll() })
        return directories
    }
}

/// The storage and lock key of ``OpenDirectories``.
private struct OpenDirectoriesKey: StorageKey, LockKey {
    typealias Value = OpenDirectories
}
