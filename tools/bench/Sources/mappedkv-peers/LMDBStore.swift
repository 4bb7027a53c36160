import CLMDB

/// LMDB through liblmdb: one environment per directory, the unnamed database, opened with
/// `MDB_NOSYNC | MDB_NOMETASYNC` (commits write with `pwrite` but never fsync). Every write is its
/// own write transaction (begin, put or del, commit). Every get renews one reused read-only
/// transaction and resets it afterwards (`mdb_txn_renew` / `mdb_txn_reset`), LMDB's idiomatic fast
/// path for short reads, so each get sees the latest commit. Values: an Int32 as 4 little-endian
/// bytes, a string as its UTF-8 bytes.
final class LMDBStore: BenchStore {
    /// Address space reserved for the map: far above what the workloads write (the file grows as written).
    static let mapSize = 4 << 30
    private let env: OpaquePointer
    private let dbi: MDB_dbi
    private let readTransaction: OpaquePointer

    init(directory: String) throws {
        env = try Self.openEnvironment(directory)
        do {
            var txn: OpaquePointer?
            try Self.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
            guard let setup = txn else { throw BenchError("LMDB: mdb_txn_begin returned no transaction") }
            var handle = MDB_dbi()
            let opened = mdb_dbi_open(setup, nil, UInt32(MDB_CREATE), &handle)
            guard opened == MDB_SUCCESS else {
                mdb_txn_abort(setup)
                throw Self.failure(opened, "mdb_dbi_open")
            }
            try Self.check(mdb_txn_commit(setup), "mdb_txn_commit (dbi_open)")
            dbi = handle
            var reader: OpaquePointer?
            try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &reader), "mdb_txn_begin (read-only)")
            guard let reader else { throw BenchError("LMDB: mdb_txn_begin returned no read transaction") }
            mdb_txn_reset(reader)
            readTransaction = reader
        } catch {
            mdb_env_close(env)
            throw error
        }
    }

    // MARK: Operations

    @inline(__always)
    func setInt32(_ value: Int32, forKey key: String) throws {
        var little = value.littleEndian
        try withUnsafeBytes(of: &little) { bytes in try put(key: key, value: bytes) }
    }

    @inline(__always)
    func setString(_ value: String, forKey key: String) throws {
        try value.withUTF8Bytes { bytes in try put(key: key, value: bytes) }
    }

    @inline(__always)
    func int32(forKey key: String) throws -> Int32? {
        try read(key: key) { bytes in
            guard bytes.count == 4 else { throw BenchError("LMDB: value of \(key) is \(bytes.count) bytes, not 4") }
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
            let txn = try beginWrite()
            var k = Self.value(keyBytes)
            let rc = mdb_del(txn, dbi, &k, nil)
            guard rc == MDB_SUCCESS || rc == MDB_NOTFOUND else {
                mdb_txn_abort(txn)
                throw Self.failure(rc, "mdb_del")
            }
            try Self.check(mdb_txn_commit(txn), "mdb_txn_commit (del)")
        }
    }

    func contains(_ key: String) throws -> Bool { try read(key: key) { _ in () } != nil }

    func close() throws {
        mdb_txn_abort(readTransaction)
        mdb_env_close(env)
    }

    /// Opens the environment and walks the database with a cursor in one read-only transaction,
    /// decoding every value.
    static func reopenAndLoad(directory: String) throws -> LoadedEntries {
        let env = try openEnvironment(directory)
        defer { mdb_env_close(env) }
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin (load)")
        guard let txn else { throw BenchError("LMDB: mdb_txn_begin returned no transaction") }
        defer { mdb_txn_abort(txn) }
        var dbi = MDB_dbi()
        try check(mdb_dbi_open(txn, nil, 0, &dbi), "mdb_dbi_open (load)")
        var opened: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &opened), "mdb_cursor_open")
        guard let cursor = opened else { throw BenchError("LMDB: mdb_cursor_open returned no cursor") }
        defer { mdb_cursor_close(cursor) }
        var result = LoadedEntries(count: 0, sum: 0)
        var sum: Int64 = 0
        var key = MDB_val()
        var value = MDB_val()
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == MDB_SUCCESS {
            guard value.mv_size == 4, let data = value.mv_data else {
                throw BenchError("LMDB: a value in the scan is not 4 bytes")
            }
            sum &+= Int64(Int32(littleEndian: data.loadUnaligned(as: Int32.self)))
            result.count += 1
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        guard rc == MDB_NOTFOUND else { throw failure(rc, "mdb_cursor_get") }
        result.sum = sum
        return result
    }

    // MARK: Transactions

    @inline(__always)
    private func beginWrite() throws -> OpaquePointer {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        guard let txn else { throw BenchError("LMDB: mdb_txn_begin returned no transaction") }
        return txn
    }

    @inline(__always)
    private func put(key: String, value: UnsafeRawBufferPointer) throws {
        try key.withUTF8Bytes { keyBytes in
            let txn = try beginWrite()
            var k = Self.value(keyBytes)
            var v = Self.value(value)
            let rc = mdb_put(txn, dbi, &k, &v, 0)
            guard rc == MDB_SUCCESS else {
                mdb_txn_abort(txn)
                throw Self.failure(rc, "mdb_put")
            }
            try Self.check(mdb_txn_commit(txn), "mdb_txn_commit (put)")
        }
    }

    /// Renews the read transaction, looks `key` up, hands the value's bytes to `decode` while the
    /// transaction keeps them valid, and resets the transaction.
    @inline(__always)
    private func read<R>(key: String, _ decode: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try key.withUTF8Bytes { keyBytes in
            try Self.check(mdb_txn_renew(readTransaction), "mdb_txn_renew")
            defer { mdb_txn_reset(readTransaction) }
            var k = Self.value(keyBytes)
            var v = MDB_val()
            let rc = mdb_get(readTransaction, dbi, &k, &v)
            if rc == MDB_NOTFOUND { return nil }
            guard rc == MDB_SUCCESS else { throw Self.failure(rc, "mdb_get") }
            return try decode(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
        }
    }

    // MARK: Helpers

    private static func openEnvironment(_ directory: String) throws -> OpaquePointer {
        var created: OpaquePointer?
        try check(mdb_env_create(&created), "mdb_env_create")
        guard let env = created else { throw BenchError("LMDB: mdb_env_create returned no environment") }
        do {
            try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
            try check(
                mdb_env_open(env, directory, UInt32(MDB_NOSYNC | MDB_NOMETASYNC), 0o644), "mdb_env_open \(directory)")
        } catch {
            mdb_env_close(env)
            throw error
        }
        return env
    }

    /// An `MDB_val` over `bytes` (LMDB does not write through a key or a value it is given).
    @inline(__always)
    private static func value(_ bytes: UnsafeRawBufferPointer) -> MDB_val {
        MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
    }

    @inline(__always)
    private static func check(_ rc: Int32, _ call: String) throws {
        guard rc == MDB_SUCCESS else { throw failure(rc, call) }
    }

    private static func failure(_ rc: Int32, _ call: String) -> BenchError {
        BenchError("LMDB: \(call) failed: \(String(cString: mdb_strerror(rc))) (\(rc))")
    }

    /// The library's version string, e.g. "LMDB 0.9.24: (July 24, 2019)".
    static var libraryVersion: String { String(cString: mdb_version(nil, nil, nil)) }
}
