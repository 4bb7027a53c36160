import Foundation
import Testing

@testable import MappedKV

/// A store's shared instance goes with its last handle, whatever the handles did.
@Suite struct SharedStoreReleaseTests {
    @Test(
        "after an exclusive section, closing the last handle frees the shared instance (the spare transaction held it)",
        arguments: [false, true])
    func sharedInstanceIsFreed(multiProcess: Bool) throws {
        let dir = TemporaryDirectory("release")
        weak var shared: SharedStore?
        do {
            let store = try MappedKV(
                id: "s", directory: dir.path, configuration: Configuration(isMultiProcess: multiProcess))
            shared = store.shared
            try store.withExclusiveLock { transaction in try transaction.set(1, forKey: "k") }
            store.close()
        }
        #expect(shared == nil, "the shared instance outlived its last handle")
    }
}
