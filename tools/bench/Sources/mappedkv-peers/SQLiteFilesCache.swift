import CSQLite
import Glibc

/// The SQLite-plus-files design of YYKVStorage (YYDiskCache's storage), written here in Swift.
///
/// `manifest.sqlite` in WAL mode with `synchronous=NORMAL` holds one row per entry in YYKVStorage's
/// table, `manifest(key TEXT PRIMARY KEY, filename TEXT, size INTEGER, inline_data BLOB,
/// modification_time INTEGER, last_access_time INTEGER, extended_data BLOB)`, with an index on
/// `last_access_time`; times are whole seconds. Every statement is prepared once at open and every
/// operation is its own autocommit statement, as in YYKVStorage.
///
/// - A value larger than ``inlineThreshold`` (20 KiB) goes to `data/<hash of the key>` (written to
///   a temporary name and renamed; no fsync) and the row keeps only its file name; a smaller value
///   is stored inline, after looking up whether the key had a file and removing it.
/// - A get selects the whole row, reads the file if the row names one (a missing file drops the
///   row), and then updates the row's `last_access_time`.
/// - A trim to a count removes, 16 rows at a time in `last_access_time` order, each row's file and
///   row (one autocommit `DELETE` per entry), then checkpoints the WAL.
/// - The statistics are `SELECT count(*)` and `SELECT sum(size)`.
final class SQLiteFilesCache: BenchDiskCache {
    static let inlineThreshold = 20 * 1024
    static let databaseName = "manifest.sqlite"
    /// Rows fetched per step of a trim.
    static let trimBatch = 16
    private static let columns =
        "key, filename, size, inline_data, modification_time, last_access_time, extended_data"

    private let db: OpaquePointer
    private let files: CacheDirectory
    private let insert: OpaquePointer
    private let selectFilename: OpaquePointer
    private let selectItem: OpaquePointer
    private let updateAccess: OpaquePointer
    private let delete: OpaquePointer
    private let selectOldest: OpaquePointer
    private let selectCount: OpaquePointer
    private let selectSize: OpaquePointer

    init(directory: String) throws {
        let files = try CacheDirectory(try Scratch.existingDirectory(directory) + "/data")
        let db: OpaquePointer
        do {
            db = try SQLiteStore.open("\(directory)/\(Self.databaseName)")
        } catch {
            files.close()
            throw error
        }
        do {
            let mode = try SQLiteStore.pragma(db, "PRAGMA journal_mode=WAL")
            guard mode == "wal" else { throw BenchError("SQLite: journal_mode=WAL answered \(mode ?? "nothing")") }
            _ = try SQLiteStore.pragma(db, "PRAGMA synchronous=NORMAL")
            try SQLiteStore.execute(
                db,
                "CREATE TABLE IF NOT EXISTS manifest(key TEXT, filename TEXT, size INTEGER, inline_data BLOB, "
                    + "modification_time INTEGER, last_access_time INTEGER, extended_data BLOB, PRIMARY KEY(key))")
            try SQLiteStore.execute(
                db, "CREATE INDEX IF NOT EXISTS last_access_time_idx ON manifest(last_access_time)")
            insert = try SQLiteStore.prepare(
                db, "INSERT OR REPLACE INTO manifest(\(Self.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
            selectFilename = try SQLiteStore.prepare(db, "SELECT filename FROM manifest WHERE key = ?1")
            selectItem = try SQLiteStore.prepare(db, "SELECT \(Self.columns) FROM manifest WHERE key = ?1")
            updateAccess = try SQLiteStore.prepare(db, "UPDATE manifest SET last_access_time = ?2 WHERE key = ?1")
            delete = try SQLiteStore.prepare(db, "DELETE FROM manifest WHERE key = ?1")
            selectOldest = try SQLiteStore.prepare(
                db, "SELECT key, filename, size FROM manifest ORDER BY last_access_time ASC LIMIT ?1")
            selectCount = try SQLiteStore.prepare(db, "SELECT count(*) FROM manifest")
            selectSize = try SQLiteStore.prepare(db, "SELECT sum(size) FROM manifest")
        } catch {
            sqlite3_close_v2(db)
            files.close()
            throw error
        }
        self.db = db
        self.files = files
    }

    // MARK: Operations

    @inline(__always)
    func set(_ value: [UInt8], forKey key: String) throws {
        let now = Int64(time(nil))
        if value.count > Self.inlineThreshold {
            let name = KeyHash.fileName(key)
            try value.withUnsafeBytes { bytes in try files.write(bytes, to: name, through: name + ".tmp") }
            do {
                try save(key: key, filename: name, size: value.count, inline: nil, now: now)
            } catch {
                try? files.remove(name)
                throw error
            }
        } else {
            if let old = try filename(forKey: key) { try files.remove(old) }
            try value.withUnsafeBytes { bytes in
                try save(key: key, filename: nil, size: value.count, inline: bytes, now: now)
            }
        }
    }

    @inline(__always)
    func value(forKey key: String) throws -> [UInt8]? {
        let found: (filename: String?, inline: [UInt8]?)? = try key.withUTF8Bytes { keyBytes in
            try bindKey(selectItem, keyBytes)
            defer { sqlite3_reset(selectItem) }
            let rc = sqlite3_step(selectItem)
            if rc == SQLITE_DONE { return nil }
            guard rc == SQLITE_ROW else { throw SQLiteStore.failure(db, rc, "sqlite3_step (SELECT item)") }
            if let name = sqlite3_column_text(selectItem, 1) { return (String(cString: name), nil) }
            let count = Int(sqlite3_column_bytes(selectItem, 3))
            guard count > 0, let blob = sqlite3_column_blob(selectItem, 3) else { return (nil, []) }
            return (nil, [UInt8](UnsafeRawBufferPointer(start: blob, count: count)))
        }
        guard let found else { return nil }
        let value: [UInt8]
        if let name = found.filename {
            guard let read = try files.read(name) else {
                try remove(key: key)
                return nil
            }
            value = read
        } else {
            value = found.inline ?? []
        }
        try key.withUTF8Bytes { keyBytes in
            try bindKey(updateAccess, keyBytes)
            try bind(sqlite3_bind_int64(updateAccess, 2, Int64(time(nil))), "sqlite3_bind_int64")
            try finishWrite(updateAccess, "UPDATE last_access_time")
        }
        return value
    }

    func trim(toCount count: Int) throws {
        var total = try single(selectCount, "SELECT count(*)")
        while total > count {
            var batch: [(key: String, filename: String?)] = []
            try bind(sqlite3_bind_int(selectOldest, 1, Int32(Self.trimBatch)), "sqlite3_bind_int")
            var rc = sqlite3_step(selectOldest)
            while rc == SQLITE_ROW {
                let key = sqlite3_column_text(selectOldest, 0).map { String(cString: $0) } ?? ""
                batch.append((key, sqlite3_column_text(selectOldest, 1).map { String(cString: $0) }))
                rc = sqlite3_step(selectOldest)
            }
            sqlite3_reset(selectOldest)
            guard rc == SQLITE_DONE else { throw SQLiteStore.failure(db, rc, "sqlite3_step (SELECT oldest)") }
            if batch.isEmpty { break }
            for item in batch where total > count {
                if let name = item.filename { try files.remove(name) }
                try remove(key: item.key)
                total -= 1
            }
        }
        let rc = sqlite3_wal_checkpoint(db, nil)
        guard rc == SQLITE_OK else { throw SQLiteStore.failure(db, rc, "sqlite3_wal_checkpoint") }
    }

    func statistics() throws -> CacheTotals {
        CacheTotals(
            count: try single(selectCount, "SELECT count(*)"), bytes: try single(selectSize, "SELECT sum(size)"))
    }

    func close() throws {
        for statement in [
            insert, selectFilename, selectItem, updateAccess, delete, selectOldest, selectCount, selectSize,
        ] {
            let rc = sqlite3_finalize(statement)
            guard rc == SQLITE_OK else { throw SQLiteStore.failure(db, rc, "sqlite3_finalize") }
        }
        let rc = sqlite3_close(db)
        guard rc == SQLITE_OK else { throw SQLiteStore.failure(db, rc, "sqlite3_close") }
        files.close()
    }

    // MARK: Statements

    /// `INSERT OR REPLACE` of the whole row; blobs and text are bound without copies and the
    /// statement is reset before they go away.
    @inline(__always)
    private func save(key: String, filename: String?, size: Int, inline: UnsafeRawBufferPointer?, now: Int64) throws {
        try key.withUTF8Bytes { keyBytes in
            try (filename ?? "").withUTF8Bytes { name in
                try bindKey(insert, keyBytes)
                if filename != nil {
                    try bindText(insert, 2, name)
                } else {
                    try bind(sqlite3_bind_null(insert, 2), "sqlite3_bind_null")
                }
                try bind(sqlite3_bind_int64(insert, 3, Int64(size)), "sqlite3_bind_int64")
                if let inline {
                    try bind(
                        sqlite3_bind_blob(insert, 4, inline.baseAddress, Int32(inline.count), nil), "sqlite3_bind_blob")
                } else {
                    try bind(sqlite3_bind_null(insert, 4), "sqlite3_bind_null")
                }
                try bind(sqlite3_bind_int64(insert, 5, now), "sqlite3_bind_int64")
                try bind(sqlite3_bind_int64(insert, 6, now), "sqlite3_bind_int64")
                try bind(sqlite3_bind_null(insert, 7), "sqlite3_bind_null")
                try finishWrite(insert, "INSERT")
            }
        }
    }

    /// The file name the row of `key` holds, if the row exists and names a file.
    @inline(__always)
    private func filename(forKey key: String) throws -> String? {
        try key.withUTF8Bytes { keyBytes in
            try bindKey(selectFilename, keyBytes)
            defer { sqlite3_reset(selectFilename) }
            let rc = sqlite3_step(selectFilename)
            if rc == SQLITE_DONE { return nil }
            guard rc == SQLITE_ROW else { throw SQLiteStore.failure(db, rc, "sqlite3_step (SELECT filename)") }
            return sqlite3_column_text(selectFilename, 0).map { String(cString: $0) }
        }
    }

    @inline(__always)
    private func remove(key: String) throws {
        try key.withUTF8Bytes { keyBytes in
            try bindKey(delete, keyBytes)
            try finishWrite(delete, "DELETE")
        }
    }

    /// Steps a one-row, one-integer query and resets it.
    private func single(_ statement: OpaquePointer, _ what: String) throws -> Int {
        defer { sqlite3_reset(statement) }
        let rc = sqlite3_step(statement)
        guard rc == SQLITE_ROW else { throw SQLiteStore.failure(db, rc, "sqlite3_step (\(what))") }
        return Int(sqlite3_column_int64(statement, 0))
    }

    @inline(__always)
    private func bindKey(_ statement: OpaquePointer, _ key: UnsafeRawBufferPointer) throws {
        try bindText(statement, 1, key)
    }

    @inline(__always)
    private func bindText(_ statement: OpaquePointer, _ index: Int32, _ text: UnsafeRawBufferPointer) throws {
        let rc = text.withMemoryRebound(to: CChar.self) { chars in
            sqlite3_bind_text(statement, index, chars.baseAddress, Int32(chars.count), nil)
        }
        try bind(rc, "sqlite3_bind_text")
    }

    @inline(__always)
    private func bind(_ rc: Int32, _ call: String) throws {
        guard rc == SQLITE_OK else { throw SQLiteStore.failure(db, rc, call) }
    }

    /// Steps a write statement to completion and resets it (so no bound pointer outlives its bytes).
    @inline(__always)
    private func finishWrite(_ statement: OpaquePointer, _ what: String) throws {
        let rc = sqlite3_step(statement)
        let reset = sqlite3_reset(statement)
        guard rc == SQLITE_DONE else { throw SQLiteStore.failure(db, rc, "sqlite3_step (\(what))") }
        guard reset == SQLITE_OK else { throw SQLiteStore.failure(db, reset, "sqlite3_reset (\(what))") }
    }
}
