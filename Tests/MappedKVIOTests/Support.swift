// Support for the MappedKVIO tests: a temporary directory per test, real child processes (started with
// posix_spawnp, never fork) that probe or hold locks, and threads watched through /proc while they are
// blocked in a system call. Nothing here proves anything by itself; it only lets the tests observe.

import Dispatch
import Foundation
import Glibc
import MappedKVIO
import Synchronization

/// A failure of the test machinery itself, not of the code under test.
struct SupportError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Temporary directories

/// A fresh directory made by `mkdtemp` under /tmp for one test.
struct TemporaryDirectory {
    let path: String

    /// Runs `body` with a new directory, then removes the directory and everything in it.
    static func with<R>(_ body: (TemporaryDirectory) throws -> R) throws -> R {
        var template = Array("/tmp/mappedkvio-tests-XXXXXX".utf8CString)
        let made: String? = template.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, let result = mkdtemp(base) else { return nil }
            return String(cString: result)
        }
        guard let made else { throw SystemError("mkdtemp", path: "/tmp", errno: Glibc.errno) }
        let directory = TemporaryDirectory(path: made)
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        return try body(directory)
    }

    func file(_ name: String) -> String { path + "/" + name }
}

/// Writes `bytes` to a new file at `path` through the code under test.
func makeFile(_ path: String, _ bytes: [UInt8]) throws {
    let file = try FileDescriptor.open(path, access: .writeTruncate)
    defer { file.close() }
    try write(bytes, to: file, at: 0)
}

/// Writes `bytes` at `offset` of `file` with FileDescriptor.write. (A closure annotated
/// `throws(SystemError)` passed to Array.withUnsafeBytes crashes the Swift 6.3.1 compiler in IRGen.)
func write(_ bytes: [UInt8], to file: FileDescriptor, at offset: Int) throws {
    try bytes.withUnsafeBytes { buffer in try file.write(buffer, at: offset) }
}

/// `count` bytes of a recognizable pattern that never contains a zero byte.
func pattern(_ count: Int, seed: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(1 + ($0 &* 7 &+ seed) % 251) }
}

/// Polls `condition` until it holds, failing after `seconds`. The short pause between polls only
/// spares the CPU; correctness never depends on it (the condition is what is waited for).
func waitUntil(_ what: String, seconds: Double = 30, _ condition: () throws -> Bool) throws {
    let deadline = DispatchTime.now() + seconds
    while try !condition() {
        guard DispatchTime.now() < deadline else { throw SupportError("timed out waiting until \(what)") }
        var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        _ = nanosleep(&pause, nil)
    }
}

// MARK: - Child processes

/// How a child process ended. `WIFEXITED` and friends are macros Swift does not import, so the wait
/// status is decoded by hand: the low 7 bits are the terminating signal, or 0 for a normal exit whose
/// status is in bits 8-15.
enum Termination: Equatable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    init(waitStatus status: Int32) {
        let signal = status & 0x7f
        self = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    var description: String {
        switch self {
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal): "killed by signal \(signal)"
        }
    }
}

/// A real child process started with `posix_spawnp`. When `connected`, the child's stdin and stdout are
/// one end of a socket pair whose other end this object keeps: the child reports through it, and
/// closing it gives the child end-of-file on stdin. Otherwise stdin is /dev/null and stdout is inherited.
final class ChildProcess {
    let pid: pid_t
    let arguments: [String]
    private var channel: Int32
    private var termination: Termination?

    init(_ arguments: [String], connected: Bool = false) throws {
        self.arguments = arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Both ends are close-on-exec from the start, so no child spawned meanwhile by another test
        // inherits them; dup2 in the child clears the flag on its copies.
        var ends: [Int32] = [-1, -1]
        if connected {
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            guard socketpair(AF_UNIX, type, 0, &ends) == 0 else {
                throw SystemError("socketpair", errno: Glibc.errno)
            }
            posix_spawn_file_actions_adddup2(&actions, ends[1], 0)
            posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        // The child starts with no blocked signals and default actions for the signals the tests
        // touch (an ignored signal would otherwise stay ignored across exec).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGXFSZ, SIGUSR1, SIGALRM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { (argument: String) in strdup(argument) } + [nil]
        defer { for argument in argv { free(argument) } }
        var child: pid_t = 0
        let code = posix_spawnp(&child, arguments[0], &actions, &attributes, argv, environ)
        if connected { Glibc.close(ends[1]) }
        guard code == 0 else {
            if connected { Glibc.close(ends[0]) }
            throw SystemError("posix_spawnp", path: arguments[0], errno: code)
        }
        pid = child
        channel = ends[0]
    }

    deinit {
        // Only reached without a wait when a test failed part-way: do not leave a lock holder behind.
        closeChannel()
        if termination == nil {
            kill(pid, SIGKILL)
            _ = wait()
        }
    }

    /// Runs `arguments` to completion.
    static func run(_ arguments: [String]) throws -> Termination {
        try ChildProcess(arguments).wait()
    }

    /// Reads one line the child wrote, without the newline; nil at end of file.
    func readLine() throws -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = Glibc.read(channel, &byte, 1)
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw SystemError("read", path: arguments[0], errno: Glibc.errno)
            }
            if n == 0 { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Closes this end of the channel: the child reads end of file.
    func closeChannel() {
        if channel >= 0 { Glibc.close(channel) }
        channel = -1
    }

    /// Waits for the child to end (once; later calls return the same answer).
    @discardableResult
    func wait() -> Termination {
        if let termination { return termination }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && Glibc.errno == EINTR {}
        let result = Termination(waitStatus: status)
        termination = result
        return result
    }

    /// Closes the channel and waits: how a holder is told to let go.
    @discardableResult
    func release() -> Termination {
        closeChannel()
        return wait()
    }
}

// MARK: - Another process and its locks

/// Locks as another process sees them: `flock(1)` from util-linux for `flock(2)` locks, python3 for
/// open-file-description byte-range locks.
enum OtherProcess {
    /// The exit status the probes use for "a conflicting lock is held".
    static let conflict: Int32 = 99

    /// Whether another process could take a `flock` of `kind` on `path` right now.
    static func canFlock(_ path: String, _ kind: LockKind) throws -> Bool {
        try answer(ChildProcess.run(flockArguments(path, kind) + ["true"]))
    }

    /// Starts a process that takes a `flock` of `kind` on `path` (failing if it is busy) and holds it
    /// until its stdin closes (``ChildProcess/release()``).
    static func holdFlock(_ path: String, _ kind: LockKind) throws -> ChildProcess {
        let command = flockArguments(path, kind) + ["sh", "-c", "echo locked; exec cat >/dev/null"]
        return try hold(ChildProcess(command, connected: true))
    }

    /// Whether another process could take an OFD byte-range lock of `kind` on `path` right now.
    static func canLockRange(_ path: String, offset: Int, length: Int, _ kind: LockKind) throws -> Bool {
        try answer(ChildProcess.run(rangeArguments(path, offset, length, kind, hold: false)))
    }

    /// Starts a process that takes an OFD byte-range lock (failing if it is busy) and holds it until
    /// its stdin closes.
    static func holdRange(_ path: String, offset: Int, length: Int, _ kind: LockKind) throws -> ChildProcess {
        try hold(ChildProcess(rangeArguments(path, offset, length, kind, hold: true), connected: true))
    }

    private static func flockArguments(_ path: String, _ kind: LockKind) -> [String] {
        let option = kind == .shared ? "--shared" : "--exclusive"
        return ["flock", "--nonblock", "--conflict-exit-code", String(conflict), option, path]
    }

    private static func rangeArguments(
        _ path: String, _ offset: Int, _ length: Int, _ kind: LockKind, hold: Bool
    ) -> [String] {
        let arguments = [path, String(offset), String(length), kind == .shared ? "shared" : "exclusive"]
        return ["python3", "-c", rangeLockScript] + arguments + [hold ? "hold" : "probe"]
    }

    /// struct flock is short l_type, short l_whence, (padding), off_t l_start, off_t l_len, pid_t l_pid
    /// (0 for OFD locks), (padding): "hhqqii" in native alignment, 32 bytes on 64-bit Linux.
    private static let rangeLockScript = """
        import errno, fcntl, os, struct, sys
        path, offset, length, kind, mode = sys.argv[1:6]
        fd = os.open(path, os.O_RDWR)
        kind = fcntl.F_WRLCK if kind == "exclusive" else fcntl.F_RDLCK
        request = struct.pack("hhqqii", kind, os.SEEK_SET, int(offset), int(length), 0, 0)
        try:
            fcntl.fcntl(fd, getattr(fcntl, "F_OFD_SETLK", 37), request)
        except OSError as error:
            if error.errno in (errno.EAGAIN, errno.EACCES):
                sys.exit(\(conflict))
            raise
        if mode == "hold":
            print("locked", flush=True)
            sys.stdin.read()
        """

    private static func answer(_ termination: Termination) throws -> Bool {
        switch termination {
        case .exited(0): return true
        case .exited(conflict): return false
        default: throw SupportError("lock probe \(termination)")
        }
    }

    private static func hold(_ child: ChildProcess) throws -> ChildProcess {
        guard try child.readLine() == "locked" else {
            throw SupportError("lock holder \(child.arguments) did not take its lock: \(child.release())")
        }
        return child
    }
}

// MARK: - Threads blocked in the kernel

/// The number of the `flock` system call, as /proc/<pid>/task/<tid>/syscall reports it.
let flockSystemCall: Int = {
    #if arch(x86_64)
    return 73
    #elseif arch(arm64) || arch(riscv64)
    return 32
    #elseif arch(i386) || arch(arm)
    return 143
    #else
    #error("add the number of the flock system call on this architecture")
    #endif
}()

/// The kernel's id of the calling thread, read from /proc/thread-self ("<pid>/task/<tid>"); `gettid`
/// is not imported without _GNU_SOURCE.
func currentThreadID() -> Int32 {
    var buffer = [CChar](repeating: 0, count: 64)
    let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard count > 0 else { return -1 }
    let link = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return link.split(separator: "/").last.flatMap { Int32($0) } ?? -1
}

/// Lets a value that is not `Sendable` cross to the thread of a ``BackgroundCall``. Sound here because
/// the test thread does not touch the value between starting the call and joining it.
struct Handoff<Value>: @unchecked Sendable {
    let value: Value
}

/// A call run on a thread of its own (a real pthread, not a task), so that the test can watch it block
/// in the kernel, send signals to that very thread, and join it.
final class BackgroundCall<Value: Sendable>: Sendable {
    private struct Identity: Sendable {
        let thread: pthread_t
        let threadID: Int32
    }

    private let identity = Mutex<Identity?>(nil)
    private let outcome = Mutex<Value?>(nil)
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `body` on a new thread that accepts `signals`. Threads inherit the signal mask of their
    /// creator, and the dispatch worker threads tests run on block signals: without unblocking them, a
    /// signal sent to the call's thread would stay pending forever.
    init(unblocking signals: [Int32] = [], _ body: @escaping @Sendable () -> Value) throws {
        let thread = Thread { [self] in
            var accepted = sigset_t()
            sigemptyset(&accepted)
            for signal in signals { sigaddset(&accepted, signal) }
            pthread_sigmask(SIG_UNBLOCK, &accepted, nil)
            identity.withLock { $0 = Identity(thread: pthread_self(), threadID: currentThreadID()) }
            started.signal()
            let result = body()
            outcome.withLock { $0 = result }
            finished.signal()
        }
        thread.start()
        started.wait()
        guard let known = identity.withLock({ $0 }), known.threadID > 0 else {
            throw SupportError("the background thread could not read its thread id")
        }
    }

    /// Whether the call has returned.
    var isFinished: Bool { outcome.withLock { $0 != nil } }

    /// The system call the thread is blocked in, or nil while it runs in user space (or is not
    /// blocked): the first field of /proc/self/task/<tid>/syscall, which reads "running" otherwise.
    var blockedSystemCall: Int? {
        guard let threadID = identity.withLock({ $0?.threadID }) else { return nil }
        let file = Glibc.open("/proc/self/task/\(threadID)/syscall", O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { Glibc.close(file) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = Glibc.read(file, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        return text.split(separator: " ").first.flatMap { Int($0) }
    }

    /// Waits until the thread is asleep in the kernel inside system call `number`.
    func waitUntilBlocked(in number: Int) throws {
        try waitUntil("the background thread blocks in system call \(number)") {
            if isFinished { throw SupportError("the background call returned instead of blocking") }
            return blockedSystemCall == number
        }
    }

    /// Sends `signal` to the call's thread alone (`pthread_kill`).
    func send(_ signal: Int32) throws {
        guard let thread = identity.withLock({ $0?.thread }) else { throw SupportError("no thread") }
        let code = pthread_kill(thread, signal)
        guard code == 0 else { throw SystemError("pthread_kill", errno: code) }
    }

    /// Waits for the call to return and gives its result.
    func join(seconds: Int = 30) throws -> Value {
        guard finished.wait(timeout: .now() + .seconds(seconds)) == .success else {
            throw SupportError("the background call did not return within \(seconds) s")
        }
        finished.signal()
        guard let value = outcome.withLock({ $0 }) else { throw SupportError("no result") }
        return value
    }
}
