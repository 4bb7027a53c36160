// The one thing Vapor's own cache and session tests change when ci.sh copies them here: the driver
// they use. `app.caches.use(.memory)` (or the memory cache Vapor picks by default) becomes the
// MappedKV cache, and `app.sessions.use(.memory)` the MappedKV sessions, each on a directory of its
// own, so the copied tests share nothing with each other or with an earlier run.
//
// Invariant: each directory is new, under one folder per test process in the system's temporary
// folder, which ci.sh removes after the run.

import Foundation
import Vapor
import VaporMappedKV

/// A new directory for one copied test.
func frameworkTestDirectory() -> String {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("vapor-mappedkv-framework-\(ProcessInfo.processInfo.processIdentifier)")
        .appendingPathComponent(UUID().uuidString).path
}

extension Application.Caches.Provider {
    /// The MappedKV cache on a new directory: what the copied tests use instead of `.memory`.
    static var mappedKVForFrameworkTests: Self { .mappedKV(directory: frameworkTestDirectory()) }
}

extension Application.Sessions.Provider {
    /// The MappedKV sessions on a new directory: what the copied tests use instead of `.memory`.
    static var mappedKVForFrameworkTests: Self { .mappedKV(directory: frameworkTestDirectory()) }
}
