import Foundation
import MappedKV
import MappedKVProcessTestSupport
import Testing

/// The stamp a multi-process store publishes for the check without its mutex
/// (Sources/MappedKV/Sharing/ObservedStamp.swift), with the `mappedkv` binary as the other process:
/// it must stop being current the moment another process has written, and must not claim to be
/// current while the store's memory is released or after it is closed.
extension MultiProcessTests {
    @Test("the published stamp is current until another process writes, and again after a catch-up")
    func observedStampFollowsOtherProcesses() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let store = try open(root)
            defer { store.close() }
            try store.set("a", forKey: "k")
            #expect(store.observedStampIsCurrent, "this process's own write keeps the stamp current")

            try CLI.succeed(["set"] + storeArguments(root) + ["k", "b"])
            #expect(!store.observedStampIsCurrent, "another process's append must move the stamp")
            try store.synchronizeChangesIfMoved()
            #expect(store.observedStampIsCurrent)
            #expect(try store.string(forKey: "k") == "b")

            // A whole-file change is seen the same way: a value larger than the file makes the
            // other process grow it, which moves the sequence.
            let large = String(repeating: "x", count: 100_000)
            try CLI.succeed(["set"] + storeArguments(root) + ["k", large])
            #expect(!store.observedStampIsCurrent, "another process's resize must move the stamp")
            try store.synchronizeChangesIfMoved()
            #expect(store.observedStampIsCurrent)
            #expect(try store.string(forKey: "k") == large)
        }
    }

    @Test("the published stamp is withdrawn while memory is released and once the store is closed")
    func observedStampIsWithdrawn() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let store = try open(root)
            try store.set("a", forKey: "k")
            try store.releaseMemory()
            #expect(!store.observedStampIsCurrent)
            try CLI.succeed(["set"] + storeArguments(root) + ["k", "b"])
            try store.synchronizeChangesIfMoved()
            #expect(store.observedStampIsCurrent, "the reload publishes the stamp again")
            #expect(try store.string(forKey: "k") == "b")
            store.close()
            #expect(!store.observedStampIsCurrent)
            #expect(throws: MappedKVError.self) { try store.synchronizeChangesIfMoved() }
        }
    }
}
