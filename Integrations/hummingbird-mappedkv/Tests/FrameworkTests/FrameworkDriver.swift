// The one thing the frameworks' own tests change when ci.sh copies them here: the persist driver
// they make. Every call opens a MappedKVPersistDriver on a directory of its own, so the copied
// tests share nothing with each other or with an earlier run.
//
// Invariant: each driver's directory is new and under the system's temporary folder.

import Foundation
import HummingbirdMappedKV

/// A driver on a new temporary directory, with `configuration` (the copied tests pass their tidy
/// interval through it).
func makeFrameworkTestDriver(
    configuration: MappedKVPersistDriver.Configuration = .init()
) throws -> MappedKVPersistDriver {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("hb-mappedkv-framework-\(UUID().uuidString)").path
    return try MappedKVPersistDriver(directory: directory, configuration: configuration)
}
