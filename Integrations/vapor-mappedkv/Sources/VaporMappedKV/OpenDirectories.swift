// The disk cache directories and sessions stores an application opened through the providers, one
// of each per directory path, kept in the application's storage and closed when the application
// shuts down. Invariant: within one application a directory's cache and its sessions store are
// each opened at most once (one background trim timer, one set of coalesced access times); the
// first configuration given for a directory's cache is the one it opens with.

import Foundation
import Logging
import MappedKV
import MappedKVCache
import Synchronization
import Vapor

/// The directories opened for one application, by path.
final class OpenDirectories: Sendable {
    /// Each opened path's cache, or why it could not be opened.
    private let opened = Mutex<[String: Result<DiskCache, MappedKVVaporError>]>([:])
    /// Each path's sessions store, or why it could not be opened.
    private let sessionStores = Mutex<[String: Result<MappedKV, MappedKVVaporError>]>([:])

    /// The cache of `directory`, opened with `configuration` unless this application already
    /// opened it; a failure to open is returned, not thrown, so that a provider (which cannot
    /// throw) hands it to every later call.
    func cache(
        directory: String, configuration: DiskCacheConfiguration, logger: Logger
    ) -> Result<DiskCache, MappedKVVaporError> {
        let path = Self.standardized(directory)
        return opened.withLock { opened in
            if let existing = opened[path] { return existing }
            let result: Result<DiskCache, MappedKVVaporError>
            do {
                let disk = try DiskCache(directory: directory, configuration: configuration, logger: logger)
                logger.debug("opened MappedKV directory", metadata: ["directory": "\(directory)"])
                result = .success(disk)
            } catch {
                logger.debug("could not open MappedKV directory", metadata: ["directory": "\(directory)"])
                result = .failure(.directoryUnavailable(directory: directory, reason: String(describing: error)))
            }
            opened[path] = result
            return result
        }
    }

    /// The sessions store of `directory`, opened as `configuration` asks unless this application
    /// already opened it; a failure to open is returned, not thrown, as ``cache(directory:configuration:logger:)``'s.
    func sessionsStore(
        directory: String, configuration: MappedKVSessionsConfiguration, logger: Logger
    ) -> Result<MappedKV, MappedKVVaporError> {
        let path = Self.standardized(directory)
        return sessionStores.withLock { stores in
            if let existing = stores[path] { return existing }
            let result: Result<MappedKV, MappedKVVaporError>
            do {
                let store = try SessionRecords.openStore(
                    directory: directory, configuration: configuration, logger: logger)
                logger.debug("opened the MappedKV sessions store", metadata: ["directory": "\(directory)"])
                result = .success(store)
            } catch {
                logger.error(
                    "could not open the MappedKV sessions store",
                    metadata: ["directory": "\(directory)", "error": "\(error)"])
                result = .failure(.directoryUnavailable(directory: directory, reason: String(describing: error)))
            }
            stores[path] = result
            return result
        }
    }

    /// `directory` as one key per directory: `/x`, `/x/` and `/x/./` name the same one.
    static func standardized(_ directory: String) -> String {
        URL(fileURLWithPath: directory).standardizedFileURL.path
    }

    /// Closes every directory and store opened here; later calls on them throw `CacheError.closed`
    /// or `MappedKVError.closed`.
    func closeAll() {
        let caches = opened.withLock { opened in opened.values.compactMap { try? $0.get() } }
        for cache in caches { cache.close() }
        let stores = sessionStores.withLock { stores in stores.values.compactMap { try? $0.get() } }
        for store in stores { store.close() }
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
