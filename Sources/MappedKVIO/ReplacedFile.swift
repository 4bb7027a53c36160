import Glibc

/// The file that a rename is about to replace, held open across the rename so that its release
/// happens on a thread of its own.
///
/// A rename that drops the last name of a file nothing has open frees the file there and then:
/// its page cache, and its blocks, which on a file system mounted with `discard` also waits for
/// the device. That takes time that grows with the file's size, and the caller of the rename may
/// hold a lock that other processes wait for. With a descriptor held, the rename only drops a
/// name, and the descriptor's close, on another thread, frees the file.
package final class ReplacedFile {
    /// Smaller files are left to the rename: freeing one costs about what starting a thread does.
    package static let minimumSize = 1 << 20

    private var file: FileDescriptor?

    /// Opens the file at `path` if it has at least ``minimumSize`` bytes; nil otherwise, or if it
    /// cannot be opened (the rename then frees it, as it would anyway).
    package init?(at path: String) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_size >= Self.minimumSize,
            let file = try? FileDescriptor.open(path, access: .readOnly)
        else { return nil }
        self.file = file
    }

    /// Closes the file here if ``releaseInBackground()`` did not: after a failed rename, the old
    /// file keeps its name and the close frees nothing.
    deinit { file?.close() }

    /// Closes the file on a thread of its own, or here if no thread can be started.
    package func releaseInBackground() {
        guard let file = file.take() else { return }
        DetachedThread.runAside { file.close() }
    }
}
