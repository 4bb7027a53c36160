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
        Self.entry(for: directory, in: opened, named: "MappedKV directory", failureLevel: .debug, logger: logger) {
            try DiskCache(directory: directory, configuration: configuration, logger: logger)
        }
    }

    /// The sessions store of `directory`, opened as `configuration` asks unless this application
    /// already opened it; a failure to open is returned, not thrown, as ``cache(directory:configuration:logger:)``'s.
    func sessionsStore(
        directory: String, configuration: MappedKVSessionsConfiguration, logger: Logger
    ) -> Result<MappedKV, MappedKVVaporError> {
        Self.entry(
            for: directory, in: sessionStores, named: "MappedKV sessions store", failureLevel: .error, logger: logger
        ) {
            try SessionRecords.openStore(directory: directory, configuration: configuration, logger: logger)
        }
    }

    /// `table`'s entry for `directory`, made by `open` (and logged) the first time it is asked for.
    private static func entry<Value: Sendable>(
        for directory: String, in table: borrowing Mutex<[String: Result<Value, MappedKVVaporError>]>,
        named what: String, failureLevel: Logger.Level, logger: Logger, open: () throws -> Value
    ) -> Result<Value, MappedKVVaporError> {
        let path = standardized(directory)
        return table.withLock { table in
            if let existing = table[path] { return existing }
            let result: Result<Value, MappedKVVaporError>
            do {
                result = .success(try open())
                logger.debug("opened the \(what)", metadata: ["directory": "\(directory)"])
            } catch {
                logger.log(
                    level: failureLevel, "could not open the \(what)",
                    metadata: ["directory": "\(directory)", "error": "\(error)"])
                result = .failure(.directoryUnavailable(directory: directory, reason: String(describing: error)))
            }
            table[path] = result
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
