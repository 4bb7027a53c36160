import Glibc

/// Starts the store's background threads (the change watcher, the interval flush, the release of
/// a replaced index file's mapping): a detached pthread that runs one closure and ends.
package enum DetachedThread {
    /// Starts a thread running `body`; the error number when no thread could be created (`body`
    /// is then released without running).
    package static func start(_ body: @escaping @Sendable () -> Void) -> Int32? {
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            return result
        }
        pthread_detach(thread)
        return nil
    }
}

extension DetachedThread {
    /// Runs `body` on a thread of its own, so that its time is not the caller's; here, at once, if
    /// no thread can be started.
    package static func runAside(_ body: @escaping @Sendable () -> Void) {
        if start(body) != nil { body() }
    }
}

/// The closure a thread runs, boxed to cross `pthread_create`'s context pointer.
private final class ThreadBody {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
