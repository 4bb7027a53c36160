import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

// The edges of OR groups and not-equal: no group, an empty group, one entry met by several groups,
// a condition on an index one group lacks, entries with no value, bounds of another type, and
// not-equal over runs of equal values (which the walk steps over).

@Suite("OR groups and not-equal")
struct QueryOrTests {
    struct Post: Codable, Sendable, Equatable {
        var likes: Int?
        var tag: String?
    }

    /// Posts p00 to p19: likes = n % 5 (none for n = 7 and 13), tag "t(n % 3)" (none for n = 4).
    static func posts(_ dir: ScratchDirectory) throws -> (CollectionStore, Bucket<Post>) {
        let collections = try CollectionStore(id: "posts", directory: dir.path)
        let posts = collections.bucket("posts", of: Post.self)
        try posts.addIndex("likes", type: .int, source: .valuePath(["likes"]))
        try posts.addIndex("tag", type: .string, source: .valuePath(["tag"]))
        for number in 0..<20 {
            try posts.put(
                Post(likes: number == 7 || number == 13 ? nil : number % 5, tag: number == 4 ? nil : "t\(number % 3)"),
                forKey: String(format: "p%02d", number))
        }
        return (collections, posts)
    }

    static func keys(_ numbers: some Sequence<Int>) -> [String] { numbers.map { String(format: "p%02d", $0) } }

    static func all(_ posts: Bucket<Post>, _ query: Query) throws -> [String] {
        var query = query
        var keys: [String] = []
        repeat {
            let page = try posts.query(query)
            keys += page.entries.map(\.key)
            query.after = page.cursor
        } while query.after != nil
        return keys
    }

    @Test("not-equal leaves out entries with no value, as SQL does, in both orders and in counts")
    func notEqual() throws {
        let dir = try ScratchDirectory()
        let (_, posts) = try Self.posts(dir)
        let withLikes = (0..<20).filter { $0 != 7 && $0 != 13 }
        let expected = Self.keys(withLikes.filter { $0 % 5 != 2 })
        #expect(try Self.all(posts, Query(where: [.notEqual("likes", .int(2))], limit: 3)) == expected)
        // Ordered by the index itself: the walk steps over the run of 2s.
        let byLikes = withLikes.filter { $0 % 5 != 2 }.sorted { ($0 % 5, $0) < ($1 % 5, $1) }
        let ordered = try Self.all(posts, Query(where: [.notEqual("likes", .int(2))], orderBy: "likes", limit: 4))
        #expect(ordered == Self.keys(byLikes))
        let descending = try Self.all(
            posts, Query(where: [.notEqual("likes", .int(2))], orderBy: "likes", descending: true, limit: 4))
        #expect(descending == Self.keys(byLikes.reversed()))
        // Counted by the range count (one index) and by a walk (two indexes).
        #expect(try posts.count(where: [.notEqual("likes", .int(2))]) == expected.count)
        #expect(
            try posts.count(where: [.notEqual("likes", .int(2)), .notEqual("likes", .int(0)), .less("likes", .int(4))])
                == withLikes.filter { [1, 3].contains($0 % 5) }.count)
        #expect(
            try posts.count(where: [.notEqual("likes", .int(2)), .equal("tag", .string("t0"))])
                == withLikes.filter { $0 % 5 != 2 && $0 % 3 == 0 }.count)
        // A bound not of the index's type equals no value: every entry with a value differs from it.
        #expect(try posts.count(where: [.notEqual("likes", .string("x"))]) == withLikes.count)
        #expect(
            try posts.count(where: [.notEqual("tag", .string("t1"))])
                == (0..<20).filter { $0 != 4 && $0 % 3 != 1 }.count)
    }

    @Test("OR groups: an entry met by both groups comes once, in order, across pages and in the count")
    func overlappingGroups() throws {
        let dir = try ScratchDirectory()
        let (_, posts) = try Self.posts(dir)
        let groups: [[QueryCondition]] = [[.greaterOrEqual("likes", .int(3))], [.equal("tag", .string("t0"))]]
        let matching = (0..<20).filter { number in
            let likes: Int? = number == 7 || number == 13 ? nil : number % 5
            return (likes.map { $0 >= 3 } ?? false) || (number != 4 && number % 3 == 0)
        }
        #expect(try posts.count(anyOf: groups) == matching.count)
        for limit in [1, 2, 5, 100] {
            #expect(try Self.all(posts, Query(anyOf: groups, limit: limit)) == Self.keys(matching))
            #expect(
                try Self.all(posts, Query(anyOf: groups, descending: true, limit: limit))
                    == Self.keys(matching.reversed()))
            // By likes: entries with no likes are left out, ties by key.
            let byLikes = matching.filter { $0 != 7 && $0 != 13 }.sorted { ($0 % 5, $0) < ($1 % 5, $1) }
            #expect(try Self.all(posts, Query(anyOf: groups, orderBy: "likes", limit: limit)) == Self.keys(byLikes))
            #expect(
                try Self.all(posts, Query(anyOf: groups, orderBy: "likes", descending: true, limit: limit))
                    == Self.keys(byLikes.reversed()))
        }
        // The same group twice is the group once.
        let twice = [[QueryCondition.equal("tag", .string("t0"))], [.equal("tag", .string("t0"))]]
        #expect(try posts.count(anyOf: twice) == (0..<20).filter { $0 % 3 == 0 }.count)
        #expect(try Self.all(posts, Query(anyOf: twice, orderBy: "tag", limit: 2)).count == 7)
    }

    @Test("no group selects nothing; an empty group selects every entry; conditions reads one group")
    func emptyGroups() throws {
        let dir = try ScratchDirectory()
        let (collections, posts) = try Self.posts(dir)
        #expect(try posts.query(Query(anyOf: [])).entries.isEmpty)
        #expect(try posts.query(Query(anyOf: [], orderBy: "likes")).entries.isEmpty)
        #expect(try posts.count(anyOf: []) == 0)
        let every = [[], [QueryCondition.equal("likes", .int(1))]]
        #expect(try posts.count(anyOf: every) == 20)
        #expect(try Self.all(posts, Query(anyOf: every, limit: 6)) == Self.keys(0..<20))
        #expect(try Self.all(posts, Query(anyOf: [[], []], orderBy: "likes", limit: 6)).count == 18)
        // A bucket without indexes: no group selects nothing, empty groups every entry.
        let plain = collections.bucket("plain", of: Post.self)
        try plain.put(Post(), forKey: "x")
        #expect(try plain.query(Query(anyOf: [])).entries.isEmpty)
        #expect(try plain.query(Query(anyOf: [[], []])).entries.map(\.key) == ["x"])
        #expect(try plain.count(anyOf: [[], []]) == 1 && plain.count(anyOf: []) == 0)

        var query = Query(where: [.equal("likes", .int(1))])
        #expect(query.groups == [[.equal("likes", .int(1))]] && query.conditions == [.equal("likes", .int(1))])
        query = Query(anyOf: [[.equal("likes", .int(1))], []])
        #expect(query.conditions.isEmpty)
        query.conditions = [.less("likes", .int(2))]
        #expect(query.groups == [[.less("likes", .int(2))]])
    }

    @Test("a condition on an index one group lacks is refused, naming the index")
    func missingIndexInOneGroup() throws {
        let dir = try ScratchDirectory()
        let (collections, posts) = try Self.posts(dir)
        let groups: [[QueryCondition]] = [[.equal("likes", .int(1))], [.equal("height", .int(3))]]
        let refused = CollectionError.unknownIndex(bucket: "posts", name: "height")
        #expect(throws: refused) { try posts.query(Query(anyOf: groups)) }
        #expect(throws: refused) { try posts.query(Query(anyOf: groups, orderBy: "likes", limit: 2)) }
        #expect(throws: refused) { try posts.count(anyOf: groups) }
        #expect(throws: CollectionError.unknownIndex(bucket: "posts", name: "height")) {
            try posts.query(Query(anyOf: [[.equal("likes", .int(1))], []], orderBy: "height"))
        }
        let plain = collections.bucket("plain", of: Post.self)
        #expect(throws: CollectionError.unknownIndex(bucket: "plain", name: "likes")) {
            try plain.query(Query(anyOf: [[], [.equal("likes", .int(1))]]))
        }
        #expect(throws: CollectionError.unknownIndex(bucket: "plain", name: "likes")) {
            try plain.count(anyOf: [[], [.equal("likes", .int(1))]])
        }
    }

    @Test("the k-way merge takes each ID once, in order, and stops at the number wanted")
    func merge() {
        let streams: [[UInt32]] = [[1, 4, 6, 9], [2, 4, 9], [], [0, 4, 10]]
        #expect(BucketIndexSet.merge(streams, want: .max, precedes: <) == [0, 1, 2, 4, 6, 9, 10])
        #expect(BucketIndexSet.merge(streams, want: 4, precedes: <) == [0, 1, 2, 4])
        #expect(BucketIndexSet.merge([[3, 2, 1], [2, 0]], want: 3, precedes: >) == [3, 2, 1])
        #expect(BucketIndexSet.merge([], want: 3, precedes: <).isEmpty)
    }
}
