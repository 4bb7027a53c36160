import Glibc
import MappedKVIO

/// The start line of a stress run: a pipe whose read end every first-generation child inherits.
/// Each child blocks reading it until the parent closes the write end after spawning them all,
/// so all children open the store at the same moment.
struct StartBarrier: ~Copyable {
    /// The descriptor number the read end gets in each child.
    static let childDescriptor: Int32 = 3

    /// The parent's read end, to be duplicated onto ``childDescriptor`` in the children; it is
    /// close-on-exec and never ``childDescriptor`` itself, so only the duplicate reaches a child.
    let readEnd: Int32
    private var writeEnd: Int32

    /// Creates the pipe.
    init() throws(SystemError) {
        var ends: [Int32] = [-1, -1]
        _ = try syscall("pipe") { pipe(&ends) }
        // Both ends become close-on-exec, the read end clear of the low descriptor numbers the
        // children's dup2 targets. (The parent spawns from one thread, so nothing can inherit the
        // originals in between.)
        let read = fcntl(ends[0], F_DUPFD_CLOEXEC, 10)
        let readCode = errno
        let write = fcntl(ends[1], F_DUPFD_CLOEXEC, 10)
        let writeCode = errno
        Glibc.close(ends[0])
        Glibc.close(ends[1])
        guard read >= 0, write >= 0 else {
            if read >= 0 { Glibc.close(read) }
            if write >= 0 { Glibc.close(write) }
            throw SystemError("fcntl F_DUPFD_CLOEXEC", errno: read < 0 ? readCode : writeCode)
        }
        readEnd = read
        writeEnd = write
    }

    /// Releases every child waiting at the barrier (they read end-of-file) and closes the pipe.
    consuming func release() {
        Glibc.close(writeEnd)
        Glibc.close(readEnd)
        discard self
    }

    deinit {
        Glibc.close(writeEnd)
        Glibc.close(readEnd)
    }

    /// In a child: blocks until the parent releases the barrier on `descriptor`, then closes it.
    static func wait(on descriptor: Int32) throws(SystemError) {
        var byte: UInt8 = 0
        while try syscall("read barrier descriptor \(descriptor)", { read(descriptor, &byte, 1) }) > 0 {}
        Glibc.close(descriptor)
    }
}
