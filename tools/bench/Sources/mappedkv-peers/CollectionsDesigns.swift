import CSQLite
import Foundation
import MappedKV
import MappedKVCollections

/// The value the collections benchmark stores: a feed post.
struct BenchPost: Codable, Sendable {
    var id: Int
    var likes: Int
    var posted: Date
    var title: String
}

/// The JSON both designs store, encoded and decoded the same way (dates as milliseconds).
enum PostJSON {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }
}

/// One side of the collections comparison: a bucket of posts with an int index (likes) and a date
/// index (posted).
protocol CollectionsDesign: AnyObject {
    func put(_ post: BenchPost, key: String) throws
    /// A put of a value already encoded as JSON (the store alone); `likes` and `posted` are the
    /// object's index columns, which the SQLite design's index block is given.
    func putEncoded(_ bytes: [UInt8], key: String, likes: Int, posted: Date) throws
    /// A page of values as stored, not decoded (the store alone).
    func pageEncoded(postedAfter after: Date, limit: Int) throws -> [[UInt8]]
    /// A page of `limit` posts posted after `after`, oldest first.
    func page(postedAfter after: Date, limit: Int) throws -> [BenchPost]
    /// The number of posts with `low <= likes < high`.
    func count(likesFrom low: Int, below high: Int) throws -> Int
    /// The first `limit` keys of the bucket after `after` (from the first if nil), by key bytes.
    func keysPage(after: String?, limit: Int) throws -> [String]
    /// The number of posts in the bucket.
    func countAll() throws -> Int
    /// A page of `limit` values as stored, oldest first, of the posts with likes in `likes` OR
    /// posted in `posted` (both ranges inclusive).
    func pageEither(likes: ClosedRange<Int>, posted: ClosedRange<Date>, limit: Int) throws -> [[UInt8]]
    func close() throws
}

/// MappedKVCollections: a CollectionStore bucket with two stored indexes, through a `Codable`
/// bucket, or (`putEncoded`, `pageEncoded`) through a RawEntrySerializer bucket of the same
/// entries, so that only the store is measured.
final class MappedKVCollectionsDesign: CollectionsDesign {
    let collections: CollectionStore
    let bucket: Bucket<BenchPost>
    let rawBucket: Bucket<[UInt8]>

    init(directory: String, createIndexes: Bool) throws {
        collections = try CollectionStore(id: "feed", directory: directory)
        bucket = collections.bucket("posts", of: BenchPost.self)
        rawBucket = collections.bucket("posts", serializer: RawEntrySerializer())
        if createIndexes {
            try bucket.addIndex("likes", type: .int, source: .valuePath(["likes"]))
            try bucket.addIndex("posted", type: .date, source: .valuePath(["posted"]))
        }
    }

    func put(_ post: BenchPost, key: String) throws { try bucket.put(post, forKey: key) }

    func putEncoded(_ bytes: [UInt8], key: String, likes: Int, posted: Date) throws {
        try rawBucket.put(bytes, forKey: key)
    }

    func page(postedAfter after: Date, limit: Int) throws -> [BenchPost] {
        try bucket.query(Query(where: [.greater("posted", .date(after))], orderBy: "posted", limit: limit)).entries
            .map(\.value)
    }

    func pageEncoded(postedAfter after: Date, limit: Int) throws -> [[UInt8]] {
        try rawBucket.query(Query(where: [.greater("posted", .date(after))], orderBy: "posted", limit: limit))
            .entries.map(\.value)
    }

    func pageEither(likes: ClosedRange<Int>, posted: ClosedRange<Date>, limit: Int) throws -> [[UInt8]] {
        let groups: [[QueryCondition]] = [
            [
                .greaterOrEqual("likes", .int(Int64(likes.lowerBound))),
                .lessOrEqual("likes", .int(Int64(likes.upperBound))),
            ],
            [.greaterOrEqual("posted", .date(posted.lowerBound)), .lessOrEqual("posted", .date(posted.upperBound))],
        ]
        return try rawBucket.query(Query(anyOf: groups, orderBy: "posted", limit: limit)).entries.map(\.value)
    }

    func count(likesFrom low: Int, below high: Int) throws -> Int {
        try bucket.count(where: [.greaterOrEqual("likes", .int(Int64(low))), .less("likes", .int(Int64(high)))])
    }

    func keysPage(after: String?, limit: Int) throws -> [String] { try bucket.keys(after: after, limit: limit) }

    func countAll() throws -> Int { try bucket.count }

    func close() throws { collections.close() }
}

/// The SQLite design MappedKVCollections replaces: a main table (rowid, bucket, key, value,
/// metadata, unique(bucket, key)) and an index table fed from each object (rowid, likes, posted)
/// with an index per column; WAL, synchronous=NORMAL, prepared statements, one transaction per put.
final class SQLiteCollectionsDesign: CollectionsDesign {
    private let db: OpaquePointer
    private let begin: OpaquePointer
    private let commit: OpaquePointer
    private let upsertMain: OpaquePointer
    private let upsertIndex: OpaquePointer
    private let selectPage: OpaquePointer
    private let countRange: OpaquePointer
    private let selectKeys: OpaquePointer
    private let countEntries: OpaquePointer
    private let selectEither: OpaquePointer
    private let encoder = PostJSON.encoder()
    private let decoder = PostJSON.decoder()
    private static let metadata = Array(#"{"source":"bench"}"#.utf8)

    init(directory: String) throws {
        db = try SQLiteStore.open("\(directory)/collections.sqlite")
        _ = try SQLiteStore.pragma(db, "PRAGMA journal_mode=WAL")
        _ = try SQLiteStore.pragma(db, "PRAGMA synchronous=NORMAL")
        try SQLiteStore.execute(
            db,
            """
            CREATE TABLE IF NOT EXISTS entries(rowid INTEGER PRIMARY KEY, bucket TEXT NOT NULL, key TEXT NOT NULL,
                value BLOB, metadata BLOB, UNIQUE(bucket, key));
            CREATE TABLE IF NOT EXISTS posts_index(rowid INTEGER PRIMARY KEY, likes INTEGER, posted INTEGER);
            CREATE INDEX IF NOT EXISTS posts_likes ON posts_index(likes);
            CREATE INDEX IF NOT EXISTS posts_posted ON posts_index(posted);
            """)
        begin = try SQLiteStore.prepare(db, "BEGIN")
        commit = try SQLiteStore.prepare(db, "COMMIT")
        upsertMain = try SQLiteStore.prepare(
            db,
            "INSERT INTO entries(bucket, key, value, metadata) VALUES ('posts', ?1, ?2, ?3) "
                + "ON CONFLICT(bucket, key) DO UPDATE SET value = excluded.value, metadata = excluded.metadata "
                + "RETURNING rowid")
        upsertIndex = try SQLiteStore.prepare(
            db, "INSERT OR REPLACE INTO posts_index(rowid, likes, posted) VALUES (?1, ?2, ?3)")
        selectPage = try SQLiteStore.prepare(
            db,
            "SELECT entries.value FROM posts_index JOIN entries ON entries.rowid = posts_index.rowid "
                + "WHERE posts_index.posted > ?1 ORDER BY posts_index.posted LIMIT ?2")
        countRange = try SQLiteStore.prepare(db, "SELECT COUNT(*) FROM posts_index WHERE likes >= ?1 AND likes < ?2")
        // Keys compare by BINARY collation (memcmp of their UTF-8), the order of MappedKV's pages;
        // both statements use the UNIQUE(bucket, key) index.
        selectKeys = try SQLiteStore.prepare(
            db, "SELECT key FROM entries WHERE bucket = 'posts' AND key > ?1 ORDER BY key LIMIT ?2")
        countEntries = try SQLiteStore.prepare(db, "SELECT COUNT(*) FROM entries WHERE bucket = 'posts'")
        selectEither = try SQLiteStore.prepare(
            db,
            "SELECT entries.value FROM posts_index JOIN entries ON entries.rowid = posts_index.rowid "
                + "WHERE (posts_index.likes BETWEEN ?1 AND ?2) OR (posts_index.posted BETWEEN ?3 AND ?4) "
                + "ORDER BY posts_index.posted LIMIT ?5")
    }

    private func step(_ statement: OpaquePointer, expecting expected: Int32, _ what: String) throws {
        let rc = sqlite3_step(statement)
        guard rc == expected else { throw SQLiteStore.failure(db, rc, what) }
    }

    func put(_ post: BenchPost, key: String) throws {
        try putEncoded([UInt8](try encoder.encode(post)), key: key, likes: post.likes, posted: post.posted)
    }

    func putEncoded(_ value: [UInt8], key: String, likes: Int, posted: Date) throws {
        try write(value, key: key, likes: likes, posted: posted)
    }

    private func write(_ value: [UInt8], key: String, likes: Int, posted: Date) throws {
        try step(begin, expecting: SQLITE_DONE, "BEGIN")
        sqlite3_reset(begin)
        let rowid: Int64 = try key.withCString { keyText in
            try value.withUnsafeBytes { bytes in
                try Self.metadata.withUnsafeBytes { metadata in
                    sqlite3_bind_text(upsertMain, 1, keyText, -1, nil)
                    sqlite3_bind_blob(upsertMain, 2, bytes.baseAddress, Int32(bytes.count), nil)
                    sqlite3_bind_blob(upsertMain, 3, metadata.baseAddress, Int32(metadata.count), nil)
                    defer { sqlite3_reset(upsertMain) }
                    try step(upsertMain, expecting: SQLITE_ROW, "upsert entries")
                    return sqlite3_column_int64(upsertMain, 0)
                }
            }
        }
        sqlite3_bind_int64(upsertIndex, 1, rowid)
        sqlite3_bind_int64(upsertIndex, 2, Int64(likes))
        sqlite3_bind_int64(upsertIndex, 3, Int64((posted.timeIntervalSince1970 * 1000).rounded()))
        try step(upsertIndex, expecting: SQLITE_DONE, "upsert posts_index")
        sqlite3_reset(upsertIndex)
        try step(commit, expecting: SQLITE_DONE, "COMMIT")
        sqlite3_reset(commit)
    }

    func page(postedAfter after: Date, limit: Int) throws -> [BenchPost] {
        try pageEncoded(postedAfter: after, limit: limit).map { try decoder.decode(BenchPost.self, from: Data($0)) }
    }

    func pageEncoded(postedAfter after: Date, limit: Int) throws -> [[UInt8]] {
        sqlite3_bind_int64(selectPage, 1, Self.milliseconds(after))
        sqlite3_bind_int64(selectPage, 2, Int64(limit))
        return try values(of: selectPage, "select page")
    }

    func pageEither(likes: ClosedRange<Int>, posted: ClosedRange<Date>, limit: Int) throws -> [[UInt8]] {
        sqlite3_bind_int64(selectEither, 1, Int64(likes.lowerBound))
        sqlite3_bind_int64(selectEither, 2, Int64(likes.upperBound))
        sqlite3_bind_int64(selectEither, 3, Self.milliseconds(posted.lowerBound))
        sqlite3_bind_int64(selectEither, 4, Self.milliseconds(posted.upperBound))
        sqlite3_bind_int64(selectEither, 5, Int64(limit))
        return try values(of: selectEither, "select either")
    }

    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// The first column of every row of `statement` (bound), as bytes; resets it.
    private func values(of statement: OpaquePointer, _ what: String) throws -> [[UInt8]] {
        defer { sqlite3_reset(statement) }
        var values: [[UInt8]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW, let bytes = sqlite3_column_blob(statement, 0) else {
                throw SQLiteStore.failure(db, rc, what)
            }
            let count = Int(sqlite3_column_bytes(statement, 0))
            values.append([UInt8](UnsafeRawBufferPointer(start: bytes, count: count)))
        }
        return values
    }

    func count(likesFrom low: Int, below high: Int) throws -> Int {
        sqlite3_bind_int64(countRange, 1, Int64(low))
        sqlite3_bind_int64(countRange, 2, Int64(high))
        defer { sqlite3_reset(countRange) }
        try step(countRange, expecting: SQLITE_ROW, "count")
        return Int(sqlite3_column_int64(countRange, 0))
    }

    func keysPage(after: String?, limit: Int) throws -> [String] {
        defer { sqlite3_reset(selectKeys) }
        // The statement runs inside `withCString`: the bound text is not copied.
        return try (after ?? "").withCString { text in
            sqlite3_bind_text(selectKeys, 1, text, -1, nil)
            sqlite3_bind_int64(selectKeys, 2, Int64(limit))
            var keys: [String] = []
            while true {
                let rc = sqlite3_step(selectKeys)
                if rc == SQLITE_DONE { break }
                guard rc == SQLITE_ROW, let text = sqlite3_column_text(selectKeys, 0) else {
                    throw SQLiteStore.failure(db, rc, "select keys page")
                }
                keys.append(String(cString: text))
            }
            return keys
        }
    }

    func countAll() throws -> Int {
        defer { sqlite3_reset(countEntries) }
        try step(countEntries, expecting: SQLITE_ROW, "count entries")
        return Int(sqlite3_column_int64(countEntries, 0))
    }

    func close() throws {
        for statement in [
            begin, commit, upsertMain, upsertIndex, selectPage, countRange, selectKeys, countEntries, selectEither,
        ] {
            sqlite3_finalize(statement)
        }
        let rc = sqlite3_close(db)
        guard rc == SQLITE_OK else { throw SQLiteStore.failure(db, rc, "sqlite3_close") }
    }
}
