import Foundation
import Glibc

/// The calling thread's folder in /proc (`<pid>/task/<tid>`), for ``isBlockedInFutex(_:)``.
func currentThreadProcFolder() -> String? {
    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
}

/// Whether the thread whose /proc folder is `folder` is blocked in the `futex` system call, which
/// is how `sem_wait`, `pthread_mutex_lock` and Swift's `Mutex` wait: the first field of its
/// `syscall` file is the number of the call a blocked thread is in ("running" while it runs).
func isBlockedInFutex(_ folder: String) -> Bool {
    #if arch(x86_64)
    let futex = "202"
    #else
    let futex = "98"  // arm64, and the other architectures of the generic system call table
    #endif
    guard let text = try? String(contentsOfFile: "/proc/\(folder)/syscall", encoding: .utf8) else { return false }
    return text.split(separator: " ").first == Substring(futex)
}

/// Polls until `folder()` names a thread blocked in `futex` or `seconds` pass; returns whether one
/// is. The pause between polls only spares the CPU: what is waited for is the block itself.
func waitUntilBlockedInFutex(seconds: Double = 30, _ folder: () -> String?) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    func blocked() -> Bool { folder().map(isBlockedInFutex) ?? false }
    while !blocked(), Date() < deadline { usleep(1_000) }
    return blocked()
}
