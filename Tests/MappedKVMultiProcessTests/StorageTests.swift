import Foundation
import MappedKV
import MappedKVProcessTestSupport
import Synchronization
import Testing

/// Storage-level functions (remove, exists, valid, list, backup, restore) against real second
/// processes: the `mappedkv` binary holds or writes the store while this process acts on it.
@Suite("Storage-level functions", .serialized)
struct StorageTests {
    func open(
        _ root: String, id: String = "s", multiProcess: Bool = true, key: CryptKey? = nil, lock: ProcessLock = .flock
    ) throws -> MappedKV {
        try MappedKV(
            id: id, directory: root,
            configuration: Configuration(isMultiProcess: multiProcess, cryptKey: key, processLock: lock))
    }

    func arguments(_ root: String, id: String = "s", lock: ProcessLock = .flock) -> [String] {
        CLI.store(root, id) + ["--multi-process", "--lock", lock == .flock ? "flock" : "shared-memory"]
    }

    // MARK: Remove

    @Test("removeStore deletes the data, meta and journal files; a second call finds nothing")
    func removeDeletesFiles() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + arguments(root) + ["k", "v"])
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: root + "/s.writeback"))
            #expect(try MappedKV.storeExists(id: "s", directory: root))
            #expect(try MappedKV.removeStore(id: "s", directory: root))
            for name in ["s", "s.crc", "s.writeback"] {
                #expect(!FileManager.default.fileExists(atPath: root + "/" + name), "\(name) is left")
            }
            #expect(try !MappedKV.storeExists(id: "s", directory: root))
            #expect(try !MappedKV.removeStore(id: "s", directory: root))
            #expect(try open(root).count == 0, "opening the ID again creates a new, empty store")
        }
    }

    @Test("removeStore refuses a store this process has open, and works once every handle is closed")
    func removeRefusesOpenStore() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let store = try open(root, multiProcess: false)
            try store.set("v", forKey: "k")
            #expect(throws: MappedKVError.storeInUse(id: "s", operation: "removing it")) {
                try MappedKV.removeStore(id: "s", directory: root)
            }
            #expect(try store.string(forKey: "k") == "v", "the refused removal changed nothing")
            store.close()
            #expect(try MappedKV.removeStore(id: "s", directory: root))
        }
    }

    @Test("removeStore refuses a store another process holds in single-process mode")
    func removeRefusesSingleProcessHolder() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + CLI.store(root, "s") + ["k", "v"])
            let holder = try HeldStore(CLI.store(root, "s"))
            defer { holder.release() }
            #expect {
                try MappedKV.removeStore(id: "s", directory: root)
            } throws: { error in
                guard case MappedKVError.modeConflict = error else { return false }
                return true
            }
            #expect(holder.release() == 0)
            #expect(try CLI.succeed(["get"] + CLI.store(root, "s") + ["--type", "string", "k"]).stdout == "v\n")
        }
    }

    @Test(
        "a process that has the store open sees it empty after removeStore, and does not crash",
        arguments: [ProcessLock.flock, .sharedMemory])
    func removeWhileOpenElsewhere(lock: ProcessLock) throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            // Enough data for a multi-page file, so the other process maps pages the removal truncates.
            let script = (0..<200).map { "set-string key\($0) \(String(repeating: "v", count: 100))" }
            try CLI.succeed(
                ["apply", "--create"] + arguments(root, lock: lock), stdin: script.joined(separator: "\n") + "\n")
            let holder = try HeldStore(
                arguments(root, lock: lock) + ["--print-keys-on-release", "--set-on-release", "late", "x"])
            defer { holder.release() }
            #expect(try MappedKV.removeStore(id: "s", directory: root))
            #expect(!FileManager.default.fileExists(atPath: root + "/s.lock"))
            #expect(holder.release() == 0, "the other process exits normally (no SIGBUS)")
            #expect(holder.laterOutput == "keys: \n", "it sees an empty store: \(holder.laterOutput)")
            #expect(!FileManager.default.fileExists(atPath: root + "/s"))
            // Its late write went to the deleted files; a new open starts empty.
            #expect(try open(root, lock: lock).allKeys == [])
        }
    }

    @Test("an open waiting for the lock while the files are deleted opens the new files by name")
    func openWaitingDuringRemovalRetries() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + arguments(root) + ["old", "1"])
            let holder = try HeldStore(arguments(root) + ["--exclusive"])
            defer { holder.release() }
            let opened = Mutex<Result<MappedKV, MappedKVError>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                let result = Result { () throws(MappedKVError) in
                    try MappedKV(id: "s", directory: root, configuration: Configuration(isMultiProcess: true))
                }
                opened.withLock { $0 = result }
                done.signal()
            }.start()
            // Wait until the open is blocked on the child's lock on the old meta file (a waiting
            // flock shows in /proc/locks as "->" with this process's ID), then delete the files.
            #expect(waitUntilWaitingForFlock(on: root + "/s.crc"), "the open never waited for the lock")
            try FileManager.default.removeItem(atPath: root + "/s")
            try FileManager.default.removeItem(atPath: root + "/s.crc")
            #expect(holder.release() == 0)
            done.wait()
            let store = try #require(try opened.withLock { $0 }?.get())
            #expect(try store.allKeys == [], "it opened the new, empty store, not the deleted one")
            try store.set("yes", forKey: "new")
            #expect(try CLI.succeed(["get"] + arguments(root) + ["--type", "string", "new"]).stdout == "yes\n")
        }
    }

    // MARK: Exists, valid, list

    @Test("storeExists, isStoreValid and stores(in:) read the files without opening them")
    func inspection() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let key = CryptKey(Array("k".utf8))!
            try open(root, id: "plain", multiProcess: false).set("v", forKey: "k")
            try open(root, id: "a/b", multiProcess: false).set("v", forKey: "k")
            try open(root, id: "secret", multiProcess: false, key: key).set("v", forKey: "k")
            #expect(try MappedKV.storeExists(id: "a/b", directory: root))
            #expect(try !MappedKV.storeExists(id: "none", directory: root))
            #expect(try MappedKV.isStoreValid(id: "plain", directory: root))
            #expect(try MappedKV.isStoreValid(id: "secret", directory: root), "without a key: CRC only")
            #expect(try MappedKV.isStoreValid(id: "secret", directory: root, cryptKey: key))
            #expect(try !MappedKV.isStoreValid(id: "secret", directory: root, cryptKey: CryptKey(Array("x".utf8))!))
            #expect(try MappedKV.isStoreValid(id: "none", directory: root), "a missing store is valid, as in MMKV")
            // Damage: one flipped byte in the region.
            var data = try Data(contentsOf: URL(fileURLWithPath: root + "/plain"))
            data[6] ^= 0xFF
            try data.write(to: URL(fileURLWithPath: root + "/plain"))
            #expect(try !MappedKV.isStoreValid(id: "plain", directory: root))

            let listed = try MappedKV.stores(in: root)
            #expect(listed.compactMap(\.id) == ["plain", "secret"])
            #expect(listed.first { $0.fileName == "plain" }?.dataFileSize == 4096)
            #expect(listed.first { $0.fileName == "plain" }?.metaFileSize == 4096)
            let hashed = try #require(listed.first { $0.id == nil })
            #expect(hashed.fileName.count == 32)
            #expect(hashed.location.dataPath == root + "/specialCharacter/" + hashed.fileName)
        }
    }

    // MARK: Backup and restore

    @Test("backup and restore round trip, through an open instance and a closed store")
    func roundTrip() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let backup = tmp.path("backup")
            let store = try open(root, multiProcess: false)
            try store.set("one", forKey: "a")
            try MappedKV.backupStore(id: "s", directory: root, to: backup)
            try store.set("two", forKey: "a")
            try store.set("new", forKey: "b")
            try MappedKV.restoreStore(id: "s", directory: root, from: backup)
            #expect(try store.allKeys == ["a"], "the open instance reloads the restored state at once")
            #expect(try store.string(forKey: "a") == "one")
            try store.set("three", forKey: "c")
            store.close()
            let reopened = try open(root, multiProcess: false)
            #expect(try reopened.allKeys == ["a", "c"])
            reopened.close()
            try MappedKV.restoreStore(id: "s", directory: root, from: backup)
            #expect(try open(root, multiProcess: false).allKeys == ["a"])
            #expect(!FileManager.default.fileExists(atPath: root + "/s.writeback"))
        }
    }

    @Test(
        "a backup taken while another process writes is a state the writer had",
        arguments: [ProcessLock.flock, .sharedMemory])
    func backupUnderConcurrentWriter(lock: ProcessLock) throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let count = 6000
            // Counter keys in order, with compactions and growth along the way: a consistent
            // snapshot holds exactly c0 ..< cN for some N, each with its own value.
            var lines: [String] = []
            for i in 0..<count {
                lines.append("set-int64 c\(i) \(i)")
                if i % 500 == 499 { lines.append("trim") }
            }
            try CLI.succeed(["set", "--create"] + arguments(root, lock: lock) + ["--type", "int64", "c0", "0"])
            let finished = Atomic<Bool>(false)
            let done = DispatchSemaphore(value: 0)
            let script = lines.joined(separator: "\n") + "\n"
            let writerArguments = ["apply", "--create"] + arguments(root, lock: lock)
            Thread {
                _ = try? CLI.run(writerArguments, stdin: script)
                finished.store(true, ordering: .releasing)
                done.signal()
            }.start()
            var prefixes: [Int] = []
            var round = 0
            while !finished.load(ordering: .acquiring) || round == 0 {
                let target = tmp.path("backup\(round % 4)")
                try MappedKV.backupStore(id: "s", directory: root, to: target)
                #expect(try MappedKV.isStoreValid(id: "s", directory: target))
                let copy = try open(target, multiProcess: false)
                let keys = try copy.allKeys
                let n = keys.count
                #expect(Set(keys) == Set((0..<n).map { "c\($0)" }), "backup \(round) is not a prefix")
                for i in 0..<n where try copy.int64(forKey: "c\(i)") != Int64(i) {
                    Issue.record("backup \(round): c\(i) is \(String(describing: try copy.int64(forKey: "c\(i)")))")
                }
                copy.close()
                prefixes.append(n)
                round += 1
            }
            done.wait()
            #expect(try open(root, lock: lock).count == count, "the writer finished")
            #expect(!prefixes.isEmpty)
        }
    }

    @Test(
        "a restore makes another process that has the store open reload the restored state",
        arguments: [ProcessLock.flock, .sharedMemory])
    func restoreWhileOpenElsewhere(lock: ProcessLock) throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let backup = tmp.path("backup")
            try CLI.succeed(["set", "--create"] + arguments(root, lock: lock) + ["restored", "yes"])
            try MappedKV.backupStore(id: "s", directory: root, to: backup)
            try CLI.succeed(
                ["apply", "--create"] + arguments(root, lock: lock),
                stdin: "clear\nset-string live 1\nset-string more 2\n")
            let holder = try HeldStore(
                arguments(root, lock: lock) + ["--print-keys-on-release", "--set-on-release", "after", "1"])
            defer { holder.release() }
            try MappedKV.restoreStore(id: "s", directory: root, from: backup)
            #expect(holder.release() == 0)
            #expect(holder.laterOutput == "keys: restored\n", "\(holder.laterOutput)")
            // The other process kept writing on top of the restored state.
            #expect(try open(root, lock: lock).allKeys == ["after", "restored"])
        }
    }

    @Test("a damaged backup is refused and the live store is left as it was")
    func damagedBackupRefused() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let backup = tmp.path("backup")
            try CLI.succeed(["set", "--create"] + arguments(root) + ["k", "old"])
            try MappedKV.backupStore(id: "s", directory: root, to: backup)
            try CLI.succeed(["set", "--create"] + arguments(root) + ["k", "live"])
            var data = try Data(contentsOf: URL(fileURLWithPath: backup + "/s"))
            data[8] ^= 0x01
            try data.write(to: URL(fileURLWithPath: backup + "/s"))
            #expect {
                try MappedKV.restoreStore(id: "s", directory: root, from: backup)
            } throws: { error in
                guard case MappedKVError.backupFailed(let id, _) = error else { return false }
                return id == "s"
            }
            #expect(try open(root).string(forKey: "k") == "live")
        }
    }

    @Test("an encrypted backup restores without its key (checked by CRC) or with it; a journal is refused")
    func encryptedAndJournaledBackups() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let backup = tmp.path("backup")
            let key = CryptKey(Array("k".utf8))!
            let store = try open(root, multiProcess: false, key: key)
            try store.set("backed up", forKey: "v")
            store.close()
            try MappedKV.backupStore(id: "s", directory: root, to: backup)
            try open(root, multiProcess: false, key: key).set("later", forKey: "v")
            try MappedKV.restoreStore(id: "s", directory: root, from: backup)
            #expect(try open(root, multiProcess: false, key: key).string(forKey: "v") == "backed up")
            #expect(throws: MappedKVError.self) {
                try MappedKV.restoreStore(id: "s", directory: root, from: backup, cryptKey: CryptKey(Array("x".utf8))!)
            }
            try MappedKV.restoreStore(id: "s", directory: root, from: backup, cryptKey: key)
            try Data([1]).write(to: URL(fileURLWithPath: backup + "/s.writeback"))
            #expect {
                try MappedKV.restoreStore(id: "s", directory: root, from: backup, cryptKey: key)
            } throws: { error in
                guard case MappedKVError.backupFailed(_, let reason) = error else { return false }
                return reason.contains("interrupted write-back")
            }
            #expect(try open(root, multiProcess: false, key: key).string(forKey: "v") == "backed up")
        }
    }

    @Test("backupAllStores and restoreAllStores cover every store, hashed IDs and encrypted ones included")
    func allStores() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let backup = tmp.path("backup")
            let key = CryptKey(Array("k".utf8))!
            for id in ["one", "two", "a:b"] { try open(root, id: id, multiProcess: false).set(id, forKey: "id") }
            try open(root, id: "secret", multiProcess: false, key: key).set("hidden", forKey: "id")
            #expect(try MappedKV.backupAllStores(directory: root, to: backup) == 4)
            for id in ["one", "two", "a:b"] { try open(root, id: id, multiProcess: false).set("changed", forKey: "id") }
            try open(root, id: "secret", multiProcess: false, key: key).set("changed", forKey: "id")
            let restored = try MappedKV.restoreAllStores(directory: root, from: backup) { name in
                name == "secret" ? key : nil
            }
            #expect(restored == 4)
            for id in ["one", "two", "a:b"] {
                #expect(try open(root, id: id, multiProcess: false).string(forKey: "id") == id)
            }
            #expect(try open(root, id: "secret", multiProcess: false, key: key).string(forKey: "id") == "hidden")
        }
    }
}
