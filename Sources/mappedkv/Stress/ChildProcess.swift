import Glibc
import MappedKVIO

/// How a child process ended, decoded from a `waitpid` status by hand (the `WIFEXITED` family
/// of macros is not imported into Swift).
enum WaitStatus: Equatable, Sendable, CustomStringConvertible {
    /// The process exited with this status.
    case exited(Int32)
    /// A signal ended the process.
    case signaled(Int32)
    /// Anything else (stopped or continued), with the raw status.
    case other(Int32)

    /// Decodes a raw status from `waitpid`.
    init(raw status: Int32) {
        let low = status & 0x7F
        if low == 0 {
            self = .exited((status >> 8) & 0xFF)  // WIFEXITED, WEXITSTATUS
        } else if low != 0x7F {
            self = .signaled(low)  // WIFSIGNALED, WTERMSIG
        } else {
            self = .other(status)  // WIFSTOPPED
        }
    }

    var description: String {
        switch self {
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal): "killed by signal \(signal)" + (signal == SIGKILL ? " (SIGKILL)" : "")
        case .other(let raw): "wait status 0x\(String(raw, radix: 16))"
        }
    }
}

/// A child process started with `posix_spawn`.
struct ChildProcess: Sendable {
    /// What the child's descriptors are set up to before it runs, in order.
    enum FileAction: Sendable {
        /// Duplicate the parent's `descriptor` onto `target` (clearing close-on-exec).
        case duplicate(Int32, onto: Int32)
        /// Open `path` with `flags` onto `target`.
        case open(String, flags: Int32, onto: Int32)
    }

    /// The process ID.
    let pid: pid_t

    /// Starts `executable` with `arguments` (without argv[0], which is `name`) and `environment`,
    /// after applying `fileActions` in the child.
    static func spawn(
        executable: String, name: String, arguments: [String], environment: [String: String], fileActions: [FileAction]
    ) throws(SystemError) -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for action in fileActions {
            let result: Int32
            switch action {
            case .duplicate(let descriptor, let target):
                result = posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .open(let path, let flags, let target):
                result = posix_spawn_file_actions_addopen(&actions, target, path, flags, 0o644)
            }
            guard result == 0 else { throw SystemError("posix_spawn file action", errno: result) }
        }

        let argv = ([name] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp + [nil]).withUnsafeBufferPointer { envpBuffer in
                posix_spawn(&pid, executable, &actions, nil, argvBuffer.baseAddress!, envpBuffer.baseAddress!)
            }
        }
        guard result == 0 else { throw SystemError("posix_spawn", path: executable, errno: result) }
        return ChildProcess(pid: pid)
    }

    /// Sends `signal` to the process.
    func kill(_ signal: Int32) {
        _ = Glibc.kill(pid, signal)
    }

    /// Waits for the process to end and reaps it.
    func wait() throws(SystemError) -> WaitStatus {
        guard let status = try reap(options: 0) else { throw SystemError("waitpid \(pid)", errno: ECHILD) }
        return status
    }

    /// Reaps the process if it has ended; nil if it is still running.
    func poll() throws(SystemError) -> WaitStatus? {
        try reap(options: WNOHANG)
    }

    private func reap(options: Int32) throws(SystemError) -> WaitStatus? {
        var status: Int32 = 0
        let result = try syscall("waitpid \(pid)") { waitpid(pid, &status, options) }
        return result == 0 ? nil : WaitStatus(raw: status)
    }
}
