// Proves the EINTR handling of the I/O layer. Directly: `syscall` and `syscallReturningErrno` retry a call
// that fails with EINTR, return the first real result, and throw any other errno at once as a
// SystemError naming the operation and path. For real: with a no-op handler installed WITHOUT
// SA_RESTART, a signal sent to a thread blocked in flock (another process holds the lock) makes a bare
// flock fail with EINTR (the control), while FileLock.lock goes back into flock after every signal and
// returns normally, holding the lock, once the other process lets go.

import Glibc
import MappedKVIO
import Synchronization
import Testing

@Suite("syscall and syscallReturningErrno")
struct SyscallRetryTests {
    @Test("syscall retries EINTR and returns the first other result", arguments: [0, 1, 5])
    func retriesInterruptions(interruptions: Int) throws {
        var calls = 0
        let result = try syscall("pread", path: "/p") { () -> Int in
            calls += 1
            guard calls > interruptions else {
                Glibc.errno = EINTR
                return -1
            }
            return 42
        }
        #expect(result == 42)
        #expect(calls == interruptions + 1)
    }

    @Test("syscall returns 0 and other non-failure results as they are")
    func passesResultsThrough() throws {
        #expect(try syscall("fsync") { Int32(0) } == 0)
        #expect(try syscall("lseek") { Int64(1 << 40) } == 1 << 40)
    }

    @Test("syscall throws any other errno at once, with the operation and path")
    func throwsOtherErrors() throws {
        var calls = 0
        let error = try #require(throws: SystemError.self) {
            try syscall("open", path: "/no/such") { () -> Int32 in
                calls += 1
                Glibc.errno = ENOENT
                return -1
            }
        }
        #expect(calls == 1)
        #expect(error.operation == "open")
        #expect(error.path == "/no/such")
        #expect(error.errno == ENOENT)
        #expect(error.description == "open /no/such: No such file or directory (errno \(ENOENT))")
    }

    @Test("syscall stops retrying at the first errno that is not EINTR")
    func interruptionsThenFailure() {
        var calls = 0
        #expect(throws: SystemError("flock", path: "/l", errno: EWOULDBLOCK)) {
            try syscall("flock", path: "/l") { () -> Int32 in
                calls += 1
                Glibc.errno = calls <= 2 ? EINTR : EWOULDBLOCK
                return -1
            }
        }
        #expect(calls == 3)
    }

    @Test("syscall reports a real failing call; without a path the error and its text have none")
    func realFailure() {
        #expect(throws: SystemError("close", errno: EBADF)) {
            try syscall("close") { Glibc.close(-1) }
        }
        #expect(SystemError("close", errno: EBADF).description == "close: Bad file descriptor (errno \(EBADF))")
    }

    @Test("syscallReturningErrno retries EINTR until the call returns 0", arguments: [0, 1, 4])
    func errnoStyleRetries(interruptions: Int) throws {
        var calls = 0
        try syscallReturningErrno("posix_fallocate", path: "/f") {
            calls += 1
            return calls > interruptions ? 0 : EINTR
        }
        #expect(calls == interruptions + 1)
    }

    @Test("syscallReturningErrno throws the returned error number, after any EINTR")
    func errnoStyleFailure() {
        var calls = 0
        let error = #expect(throws: SystemError.self) {
            try syscallReturningErrno("posix_fallocate", path: "/f") {
                calls += 1
                return calls <= 2 ? EINTR : ENOSPC
            }
        }
        #expect(calls == 3)
        #expect(error == SystemError("posix_fallocate", path: "/f", errno: ENOSPC))
    }
}

// MARK: - Real signals

/// Signals handled by ``countSignal`` in this process.
private let handledSignals = Atomic<Int>(0)

/// A handler that only counts. Installed without SA_RESTART, it makes a blocking system call in the
/// thread that receives the signal fail with EINTR instead of being restarted by the kernel.
private func countSignal(_: Int32) {
    handledSignals.wrappingAdd(1, ordering: .sequentiallyConsistent)
}

private var signalsHandled: Int { handledSignals.load(ordering: .sequentiallyConsistent) }

/// Runs `body` with ``countSignal`` handling `signal` (no SA_RESTART), then restores the previous action.
private func withInterruptingHandler<R>(for signal: Int32, _ body: () throws -> R) throws -> R {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = countSignal
    action.sa_flags = 0
    sigemptyset(&action.sa_mask)
    var previous = sigaction()
    guard sigaction(signal, &action, &previous) == 0 else { throw SystemError("sigaction", errno: Glibc.errno) }
    defer { _ = sigaction(signal, &previous, nil) }
    return try body()
}

@Suite("EINTR from real signals", .serialized, .timeLimit(.minutes(2)))
struct SignalInterruptionTests {
    @Test("control: a bare flock blocked behind another process fails with EINTR when a signal arrives")
    func bareFlockIsInterrupted() throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("lock")
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            let holder = try OtherProcess.holdFlock(path, .exclusive)
            defer { holder.release() }
            try withInterruptingHandler(for: SIGUSR1) {
                let descriptor = file.rawValue
                let call = try BackgroundCall(unblocking: [SIGUSR1]) { () -> [Int32] in
                    let result = flock(descriptor, LOCK_EX)
                    return [result, Glibc.errno]
                }
                try call.waitUntilBlocked(in: flockSystemCall)
                let before = signalsHandled
                try call.send(SIGUSR1)
                #expect(try call.join() == [-1, EINTR])
                #expect(signalsHandled == before + 1)
            }
            #expect(holder.release() == .exited(0))
        }
    }

    @Test(
        "FileLock.lock blocked behind another process retries after each signal and returns once it lets go",
        arguments: [SIGUSR1, SIGALRM])
    func lockRetriesAfterSignals(signal: Int32) throws {
        try TemporaryDirectory.with { directory in
            let path = directory.file("lock")
            let file = try FileDescriptor.open(path, access: .readWriteCreate)
            defer { file.close() }
            let holder = try OtherProcess.holdFlock(path, .exclusive)
            defer { holder.release() }
            let lock = FileLock(file)
            try withInterruptingHandler(for: signal) {
                let shared = Handoff(value: lock)
                let call = try BackgroundCall(unblocking: [signal]) {
                    Result { () throws(SystemError) in try shared.value.lock(.exclusive) }
                }
                let start = signalsHandled
                for round in 1...3 {
                    // Asleep in flock; the signal wakes it with EINTR; the handler runs on that thread.
                    try call.waitUntilBlocked(in: flockSystemCall)
                    try call.send(signal)
                    try waitUntil("signal \(round) is handled") { signalsHandled == start + round }
                }
                // Back asleep in flock after the last signal: the EINTR was retried, not returned.
                try call.waitUntilBlocked(in: flockSystemCall)
                #expect(!call.isFinished)
                #expect(holder.release() == .exited(0))
                #expect(try call.join().get() == true)
            }
            #expect(lock.exclusiveCount == 1)
            #expect(try !OtherProcess.canFlock(path, .shared))
            try lock.unlock(.exclusive)
            #expect(try OtherProcess.canFlock(path, .exclusive))
        }
    }
}
