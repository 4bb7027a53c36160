import CSQLite

/// SQLite through libsqlite3: one `WITHOUT ROWID` table `kv(key TEXT PRIMARY KEY, value BLOB)`,
/// WAL journal, `synchronous=NORMAL` (no fsync per commit; WAL checkpoints sync), one prepared
/// statement per operation kind, each operation its own autocommit transaction. Keys are bound as
/// text and values as blobs (an Int32 as 4 little-endian bytes, a string as its UTF-8 bytes),
/// both without copies (`SQLITE_STATIC`, reset before the bytes go away).
final class SQLiteStore: BenchStore {
    static let fileName = "bench.sqlite"
    private let db: OpaquePointer
    private let upsert: OpaquePointer
    private let select: OpaquePointer
    private let delete: OpaquePointer

    init(directory: String) throws {
        db = try Self.open("\(directory)/\(Self.fileName)")
        do {
            let mode = try Self.pragma(db, "PRAGMA journal_mode=WAL")
            guard mode == "wal" else { throw BenchError("SQLite: journal_mode=WAL answered \(mode ?? "nothing")") }
            _ = try Self.pragma(db, "PRAGMA synchronous=NORMAL")
            try Self.execute(db, "CREATE TABLE IF NOT EXISTS kv(key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID")
            upsert = try Self.prepare(db, "INSERT OR REPLACE INTO kv(key, value) VALUES (?1, ?2)")
            select = try Self.prepare(db, "SELECT value FROM kv WHERE key = ?1")
            delete = try Self.prepare(db, "DELETE FROM kv WHERE key = ?1")
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
    }

    // MARK: Operations

    @inline(__always)
    func setInt32(_ value: Int32, forKey key: String) throws {
        var little = value.littleEndian
        try withUnsafeBytes(of: &little) { bytes in try write(key: key, value: bytes) }
    }

    @inline(__always)
    func setString(_ value: String, forKey key: String) throws {
        try value.withUTF8Bytes { bytes in try write(key: key, value: bytes) }
    }

    @inline(__always)
    func int32(forKey key: String) throws -> Int32? {
        try read(key: key) { bytes in
            guard bytes.count == 4 else { throw BenchError("SQLite: value of \(key) is \(bytes.count) bytes, not 4") }
            return Int32(littleEndian: bytes.loadUnaligned(as: Int32.self))
        }
    }

    @inline(__always)
    func string(forKey key: String) throws -> String? {
        try read(key: key) { bytes in String(decoding: bytes, as: UTF8.self) }
    }

    @inline(__always)
    func remove(forKey key: String) throws {
        try key.withUTF8Bytes { keyBytes in
            try bindKey(delete, keyBytes)
            try finishWrite(delete, "DELETE")
        }
    }

    func contains(_ key: String) throws -> Bool { try read(key: key) { _ in () } != nil }

    func close() throws {
        for statement in [upsert, select, delete] {
            let rc = sqlite3_finalize(statement)
            guard rc == SQLITE_OK else { throw Self.failure(db, rc, "sqlite3_finalize") }
        }
        let rc = sqlite3_close(db)
        guard rc == SQLITE_OK else { throw Self.failure(db, rc, "sqlite3_close") }
    }

    /// Opens the database and walks the whole table with one `SELECT value FROM kv`, decoding every value.
    static func reopenAndLoad(directory: String) throws -> LoadedEntries {
        let db = try open("\(directory)/\(fileName)")
        var result = LoadedEntries(count: 0, sum: 0)
        do {
            let scan = try prepare(db, "SELECT value FROM kv")
            var sum: Int64 = 0
            var rc = sqlite3_step(scan)
            while rc == SQLITE_ROW {
                guard sqlite3_column_bytes(scan, 0) == 4, let blob = sqlite3_column_blob(scan, 0) else {
                    sqlite3_finalize(scan)
                    throw BenchError("SQLite: a value in the scan is not 4 bytes")
                }
                sum &+= Int64(Int32(littleEndian: blob.loadUnaligned(as: Int32.self)))
                result.count += 1
                rc = sqlite3_step(scan)
            }
            let finalized = sqlite3_finalize(scan)
            guard rc == SQLITE_DONE else { throw failure(db, rc, "sqlite3_step (scan)") }
            guard finalized == SQLITE_OK else { throw failure(db, finalized, "sqlite3_finalize (scan)") }
            result.sum = sum
        } catch {
            sqlite3_close(db)
            throw error
        }
        let rc = sqlite3_close(db)
        guard rc == SQLITE_OK else { throw failure(db, rc, "sqlite3_close") }
        return result
    }

    // MARK: Statements

    @inline(__always)
    private func write(key: String, value: UnsafeRawBufferPointer) throws {
        try key.withUTF8Bytes { keyBytes in
            try bindKey(upsert, keyBytes)
            let rc = sqlite3_bind_blob(upsert, 2, value.baseAddress, Int32(value.count), nil)
            guard rc == SQLITE_OK else { throw Self.failure(db, rc, "sqlite3_bind_blob") }
            try finishWrite(upsert, "INSERT")
        }
    }

    /// Looks `key` up and hands the value's bytes to `decode` while they are valid.
    @inline(__always)
    private func read<R>(key: String, _ decode: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try key.withUTF8Bytes { keyBytes in
            try bindKey(select, keyBytes)
            let rc = sqlite3_step(select)
            var result: Result<R, any Error>?
            if rc == SQLITE_ROW {
                let count = Int(sqlite3_column_bytes(select, 0))
                let bytes = UnsafeRawBufferPointer(
                    start: count > 0 ? sqlite3_column_blob(select, 0) : nil, count: count)
                result = Result { try decode(bytes) }
            }
            let reset = sqlite3_reset(select)
            guard rc == SQLITE_ROW || rc == SQLITE_DONE else { throw Self.failure(db, rc, "sqlite3_step (SELECT)") }
            guard reset == SQLITE_OK else { throw Self.failure(db, reset, "sqlite3_reset (SELECT)") }
            return try result?.get()
        }
    }

    @inline(__always)
    private func bindKey(_ statement: OpaquePointer, _ key: UnsafeRawBufferPointer) throws {
        let rc = key.withMemoryRebound(to: CChar.self) { chars in
            sqlite3_bind_text(statement, 1, chars.baseAddress, Int32(chars.count), nil)
        }
        guard rc == SQLITE_OK else { throw Self.failure(db, rc, "sqlite3_bind_text") }
    }

    /// Steps a write statement to completion and resets it (so no bound pointer outlives its bytes).
    @inline(__always)
    private func finishWrite(_ statement: OpaquePointer, _ what: String) throws {
        let rc = sqlite3_step(statement)
        let reset = sqlite3_reset(statement)
        guard rc == SQLITE_DONE else { throw Self.failure(db, rc, "sqlite3_step (\(what))") }
        guard reset == SQLITE_OK else { throw Self.failure(db, reset, "sqlite3_reset (\(what))") }
    }

    // MARK: Helpers (also used by SQLiteFilesCache)

    static func open(_ path: String) throws -> OpaquePointer {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard rc == SQLITE_OK, let db = handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close(handle)
            throw BenchError("SQLite: cannot open \(path): \(message) (\(rc))")
        }
        return db
    }

    static func prepare(_ db: OpaquePointer, _ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let prepared = statement else { throw failure(db, rc, "sqlite3_prepare_v2 \(sql)") }
        return prepared
    }

    static func execute(_ db: OpaquePointer, _ sql: String) throws {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw failure(db, rc, "sqlite3_exec \(sql)") }
    }

    /// Runs a pragma and returns the first column of its first row, if it answers one.
    static func pragma(_ db: OpaquePointer, _ sql: String) throws -> String? {
        let statement = try prepare(db, sql)
        let rc = sqlite3_step(statement)
        let answer = rc == SQLITE_ROW ? sqlite3_column_text(statement, 0).map { String(cString: $0) } : nil
        let finalized = sqlite3_finalize(statement)
        guard rc == SQLITE_ROW || rc == SQLITE_DONE else { throw failure(db, rc, "sqlite3_step \(sql)") }
        guard finalized == SQLITE_OK else { throw failure(db, finalized, "sqlite3_finalize \(sql)") }
        return answer
    }

    static func failure(_ db: OpaquePointer?, _ rc: Int32, _ call: String) -> BenchError {
        let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        return BenchError("SQLite: \(call) failed: \(message) (\(rc))")
    }

    /// The library's version, e.g. "3.40.1".
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
