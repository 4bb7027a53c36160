import Testing

@testable import mappedkv

/// The staleness rule of `mappedkv stress --workload cache` on synthetic journals, without
/// processes: a get that returns a value replaced by a write acknowledged 50 ms or more before it
/// began is reported with its key, child, time, value and the write it missed; a write acknowledged
/// less than 50 ms before, a concurrent write, a write in flight at a kill and a miss are allowed.
@Suite("cache stress staleness rule")
struct CacheStressTimelineTests {
    /// One child's journal, written as the worker writes it, with times in milliseconds.
    struct Journal {
        var child: Int
        var incarnation = 0
        var opno = 0
        var entries: [StressJournalEntry]

        init(child: Int) {
            self.child = child
            entries = [.start(incarnation: 0, pid: 100)]
        }

        /// Nanoseconds of `milliseconds` (all times are offset by 1 s, as a real clock's are).
        static func time(_ milliseconds: UInt64) -> UInt64 { (1_000 + milliseconds) * 1_000_000 }

        /// A put of `key` from `begin` to `end` (nil: the child is killed during it), and its value's writer.
        @discardableResult
        mutating func put(_ key: String, _ begin: UInt64, _ end: UInt64?) -> CacheStressValue.Writer {
            let writer = CacheStressValue.Writer(child: child, incarnation: incarnation, sequence: opno + 1)
            write(.cachePut(key: key, begin: Self.time(begin)), end)
            return writer
        }

        /// A removal of `key` from `begin` to `end` (nil: the child is killed during it).
        mutating func remove(_ key: String, _ begin: UInt64, _ end: UInt64?) {
            write(.cacheRemove(key: key, begin: Self.time(begin)), end)
        }

        /// A get of `key` from `begin` to `end` that returned `result`.
        mutating func get(_ key: String, _ begin: UInt64, _ end: UInt64, _ result: CacheStressRead.Result) {
            opno += 1
            entries.append(
                .read(
                    CacheStressRead(opno: opno, key: key, begin: Self.time(begin), end: Self.time(end), result: result))
            )
        }

        private mutating func write(_ intent: StressIntent, _ end: UInt64?) {
            opno += 1
            entries.append(.intent(opno: opno, intent))
            if let end {
                entries.append(.acknowledged(opno: opno, time: Self.time(end)))
            } else {
                incarnation += 1
                entries += [.start(incarnation: incarnation, pid: 100), .unresolved(opno: opno)]
            }
        }
    }

    /// The rule's violations over `journals`.
    func violations(_ journals: Journal...) -> [String] {
        CacheStressTimeline(journals: journals.map { ($0.child, $0.entries) }).staleReads()
    }

    @Test("a get that returns a value replaced by a put acknowledged 50 ms before it is reported")
    func stalePut() {
        var first = Journal(child: 0)
        var second = Journal(child: 1)
        let old = first.put("k1", 0, 1)
        second.put("k1", 10, 12)
        first.get("k1", 200, 201, .value(old))
        let found = violations(first, second)
        #expect(
            found == [
                "stale get of k1 by child 0 incarnation 0 operation 2, begun at t+0.200000 s: it returned the value of the put of k1 by child 0 incarnation 0 operation 1 (t+0.000000 s to t+0.001000 s), but should have seen the put of k1 by child 1 incarnation 0 operation 1 (t+0.010000 s to t+0.012000 s), which began after that put was acknowledged and was acknowledged 188.0 ms before the get began"
            ], "\(found)")
        // The newer value, or a miss, is fine.
        var fresh = Journal(child: 0)
        let newer = second.put("k1", 20, 21)
        fresh.get("k1", 200, 201, .value(newer))
        fresh.get("k1", 202, 203, .miss)
        #expect(violations(fresh, second).isEmpty)
    }

    @Test("a value removed 50 ms before the get is stale; a miss is always allowed")
    func staleAfterRemove() {
        var first = Journal(child: 0)
        var second = Journal(child: 1)
        let old = first.put("k2", 0, 1)
        second.remove("k2", 5, 6)
        first.get("k2", 56, 57, .value(old))
        first.get("k2", 58, 59, .miss)
        let found = violations(first, second)
        #expect(found.count == 1, "\(found)")
        #expect(
            found.first?.hasPrefix("stale get of k2 by child 0 incarnation 0 operation 2, begun at t+0.056000 s")
                == true
                && found.first?.contains(
                    "should have seen the remove of k2 by child 1 incarnation 0 operation 1 (t+0.005000 s to t+0.006000 s)"
                )
                    == true
                && found.first?.hasSuffix("acknowledged 50.0 ms before the get began") == true, "\(found)")
    }

    @Test("a get that begins less than 50 ms after the newer write was acknowledged may return the old value")
    func withinBound() {
        var first = Journal(child: 0)
        var second = Journal(child: 1)
        let old = first.put("k3", 0, 1)
        second.put("k3", 10, 12)
        first.get("k3", 61, 62, .value(old))  // 49 ms after the acknowledgement
        #expect(violations(first, second).isEmpty)
        first.get("k3", 62, 63, .value(old))  // exactly 50 ms after
        #expect(violations(first, second).count == 1)
    }

    @Test("of writes that overlap, either may win, however late the get")
    func concurrentWritesMayWin() {
        var first = Journal(child: 0)
        var second = Journal(child: 1)
        var reader = Journal(child: 2)
        let a = first.put("k4", 0, 20)
        let b = second.put("k4", 10, 30)
        reader.get("k4", 500, 501, .value(a))
        reader.get("k4", 502, 503, .value(b))
        #expect(violations(first, second, reader).isEmpty)
        // A remove that overlaps the put may also have come first.
        var remover = Journal(child: 3)
        remover.remove("k4", 15, 25)
        #expect(violations(first, second, reader, remover).isEmpty)
    }

    @Test("the witness need not be the last acknowledged write: any settled write begun after the put counts")
    func earlierSettledWriteIsWitness() {
        var first = Journal(child: 0)
        var slow = Journal(child: 1)
        var quick = Journal(child: 2)
        let old = first.put("k5", 2, 3)
        slow.put("k5", 1, 20)  // overlaps the old put: alone it would allow it
        quick.put("k5", 5, 10)  // began after the old put was acknowledged
        first.get("k5", 100, 101, .value(old))
        let found = violations(first, slow, quick)
        #expect(
            found.count == 1 && found.first?.contains("should have seen the put of k5 by child 2") == true, "\(found)")
    }

    @Test("a write in flight at a kill may or may not have happened")
    func inFlightWrites() {
        var first = Journal(child: 0)
        var second = Journal(child: 1)
        var reader = Journal(child: 2)
        let killed = first.put("k6", 0, nil)  // its value may appear at any time after it began
        second.put("k6", 10, 11)
        reader.get("k6", 300, 301, .value(killed))
        // A removal in flight makes no value stale.
        let kept = second.put("k7", 0, 1)
        first.remove("k7", 10, nil)
        reader.get("k7", 300, 301, .value(kept))
        #expect(violations(first, second, reader).isEmpty)
    }

    @Test("a value whose put began after the get returned, or that nobody put under the key, is reported")
    func impossibleValues() {
        var first = Journal(child: 0)
        var reader = Journal(child: 1)
        reader.get("k8", 0, 1, .value(CacheStressValue.Writer(child: 0, incarnation: 0, sequence: 1)))
        first.put("k8", 5, 6)
        reader.get("k8", 10, 11, .value(CacheStressValue.Writer(child: 0, incarnation: 1, sequence: 1)))
        reader.get("k9", 12, 13, .value(CacheStressValue.Writer(child: 0, incarnation: 0, sequence: 1)))
        let found = violations(first, reader)
        #expect(found.count == 3, "\(found)")
        #expect(found.first?.hasSuffix("which began after the get returned at t+0.001000 s") == true, "\(found)")
        #expect(
            found.dropFirst().first?.hasSuffix(
                "the value of child 0 incarnation 1 operation 1, which no journal put under k8") == true, "\(found)")
        #expect(found.last?.hasSuffix("which no journal put under k9") == true, "\(found)")
    }

    @Test("the journal lines of the cache workload read back as written")
    func journalLines() {
        let entries: [StressJournalEntry] = [
            .intent(opno: 7, .cachePut(key: "k1", begin: 123_456_789)),
            .acknowledged(opno: 7, time: 123_999_999),
            .intent(opno: 8, .cacheRemove(key: "k2", begin: 5)),
            .acknowledged(opno: 8),
            .read(CacheStressRead(opno: 9, key: "k3", begin: 10, end: 20, result: .miss)),
            .read(CacheStressRead(opno: 10, key: "k3", begin: 21, end: 22, result: .invalid)),
            .read(
                CacheStressRead(
                    opno: 11, key: "k3", begin: 23, end: 24,
                    result: .value(CacheStressValue.Writer(child: 3, incarnation: 2, sequence: 10)))),
        ]
        let lines = entries.map(\.line)
        #expect(lines[0] == "I 7 put k1 123456789" && lines[1] == "A 7 123999999" && lines[4] == "G 9 k3 10 20 miss")
        #expect(lines[6] == "G 11 k3 23 24 3.2.10")
        #expect(lines.map { StressJournalEntry(line: $0[...]) } == entries)
        for bad in ["G 9 k3 10 20 3.2", "G 9 k3 x 20 miss", "I 7 put k1", "A 7 -1"] {
            #expect(StressJournalEntry(line: bad[...]) == nil, "\(bad)")
        }
    }
}
