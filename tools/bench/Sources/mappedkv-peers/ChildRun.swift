import Glibc

/// One run of a child process, timed from before `posix_spawn` to after `waitpid` by the wall
/// clock: what a fresh process costs from the outside, its start, dynamic linking and exit
/// included. Its standard output comes back through a pipe read to the end before the wait, so
/// the parent never guesses when the child is done; its standard error is the parent's.
///
/// `posix_spawn` rather than Foundation's `Process`, which starts a monitoring thread and would
/// add its own cost to the figure.
enum ChildRun {
    struct Outcome {
        /// The exit status, or 128 plus the signal that ended the child.
        var status: Int32
        var output: String
        /// Wall time from before the spawn to after the wait.
        var nanoseconds: Double
    }

    /// Runs `executable` with `arguments` (argv[0] is the executable's path) in this process's
    /// environment, and fails unless it exits with status 0.
    static func run(_ executable: String, _ arguments: [String]) throws -> Outcome {
        let outcome = try start(executable, arguments)
        guard outcome.status == 0 else {
            throw BenchError(
                "\(executable) \(arguments.joined(separator: " ")) exited with status \(outcome.status): "
                    + outcome.output)
        }
        return outcome
    }

    private static func start(_ executable: String, _ arguments: [String]) throws -> Outcome {
        var ends: [Int32] = [-1, -1]
        // Glibc's module does not export pipe2; the bench starts no process from another thread.
        guard pipe(&ends) == 0 else { throw BenchError("pipe failed: errno \(errno)") }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        defer { close(readEnd) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 onto standard output clears close-on-exec there; both pipe ends close at exec.
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }

        var pid: pid_t = 0
        let start = wallNanoseconds()
        let spawned = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            posix_spawn(&pid, executable, &actions, nil, argvBuffer.baseAddress!, environ)
        }
        close(writeEnd)
        guard spawned == 0 else { throw BenchError("posix_spawn \(executable) failed: errno \(spawned)") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw BenchError("reading the output of \(executable) failed: errno \(errno)")
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw BenchError("waitpid \(pid) failed: errno \(errno)") }
        }
        let elapsed = Double(wallNanoseconds() - start)
        // WIFEXITED and WEXITSTATUS are macros Swift does not import.
        let signal = status & 0x7f
        let exit = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        return Outcome(status: exit, output: String(decoding: bytes, as: UTF8.self), nanoseconds: elapsed)
    }

    /// `CLOCK_MONOTONIC` whatever `--clock` says: a child's time is not this process's CPU time.
    private static func wallNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
