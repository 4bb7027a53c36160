// A failed system call reaches the caller as MappedKV's own SystemCallError, with the operation, the
// file, the errno and the system's text for it, and opening over a non-directory changes nothing.

import Foundation
import Glibc
import MappedKV
import Testing

@Suite struct SystemCallErrorTests {
    @Test func aStoreUnderARegularFileFailsWithTheCallThePathAndTheErrno() throws {
        let dir = TemporaryDirectory("system-error")
        let blocker = dir.file("not-a-directory")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: blocker))
        let error = #expect(throws: MappedKVError.self) {
            _ = try MappedKV(id: "prefs", directory: blocker)
        }
        guard case .system(let failure)? = error else {
            Issue.record("expected a system error, got \(String(describing: error))")
            return
        }
        #expect(failure.errno == ENOTDIR || failure.errno == EEXIST)
        #expect(failure.path?.hasPrefix(blocker) == true)
        #expect(!failure.operation.isEmpty)
        #expect(failure.message == String(cString: strerror(failure.errno)))
        #expect(error?.description.contains(failure.message) == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: blocker)) == Data("keep".utf8))
    }

    @Test func theDescriptionNamesTheCallTheFileAndTheErrno() {
        let failure = SystemCallError(operation: "open", path: "/data/prefs", errno: ENOENT)
        #expect(failure.message == String(cString: strerror(ENOENT)))
        #expect(failure.description == "open /data/prefs: \(failure.message) (errno \(ENOENT))")
        let pathless = SystemCallError(operation: "fsync", path: nil, errno: EIO, message: "I/O error")
        #expect(pathless.description == "fsync: I/O error (errno \(EIO))")
    }
}
