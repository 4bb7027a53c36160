import Foundation

/// A task executor with one thread of its own, so that a task preferring it runs even while the
/// cooperative pool is busy.
///
/// Tests that consume an `AsyncStream` or poll a child's output under a deadline use it: the tests
/// running in parallel block pool threads for tens of seconds at a time (waiting for child
/// processes, building examples), and a consumer on the pool could then receive an element only
/// after the deadline had passed, which would measure the pool, not the stream.
package final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // `jobs` is guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    /// Starts the executor's thread, which runs for the rest of the process.
    package init(name: String) {
        let thread = Thread { self.run() }
        thread.name = name
        thread.start()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
