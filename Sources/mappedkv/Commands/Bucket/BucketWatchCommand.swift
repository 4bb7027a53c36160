import ArgumentParser
import Foundation
import Glibc
import MappedKVCollections

// `mappedkv bucket watch`: a bucket's change stream (`Bucket.changes()`) as JSON lines. The
// invariant: every change the stream yields is printed as one line, written whole and unbuffered,
// so a reader of the pipe has each one as soon as the stream does; the command ends by finishing
// the stream (deadline or signal), after printing the changes already waiting.

/// `mappedkv bucket watch`.
struct BucketWatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the keys put and removed in BUCKET by other processes, as they happen.",
        discussion: """
            Prints "watching bucket NAME" on standard error once subscribed, then one JSON line per change \
            on standard output: {"bucket":..,"key":..,"change":"put"} or "remove". When the changes \
            cannot be named one by one (another process rewrote the store as a whole, or more changes \
            waited than the buffer holds) it prints {"bucket":..,"change":"resync","reason":"storeRewritten"} \
            or "overflow": re-read the bucket then. Runs until SIGINT or SIGTERM, or for --seconds. \
            Needs --multi-process, as every process writing the store does.
            """)

    @OptionGroup var store: StoreOptions
    @Option(name: .long, help: "Stop after this many seconds.") var seconds: Double?
    @Option(name: .long, help: "The most changes that wait to be printed before an overflow (default 10000).")
    var bufferLimit = 10_000
    @Argument(help: "The bucket.") var bucket: String

    func validate() throws {
        guard store.multiProcess else {
            throw ValidationError("bucket watch needs --multi-process: only processes sharing the store can change it")
        }
        if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be positive") }
        if bufferLimit < 1 { throw ValidationError("--buffer-limit must be at least 1") }
    }

    func run() throws {
        let collections = try store.openCollections(readOnly: true)
        defer { collections.close() }
        let changes = collections.bucket(bucket, serializer: RawEntrySerializer()).changes(bufferLimit: bufferLimit)
        // SIGINT and SIGTERM end the stream, so the command exits 0 after what is waiting.
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { changes.finish() }
            source.resume()
            sources.append(source)
        }
        defer { for source in sources { source.cancel() } }
        if let seconds {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { changes.finish() }
        }
        let done = DispatchSemaphore(value: 0)
        let name = bucket
        Task.detached {
            // Unbuffered, so that each line reaches a pipe as soon as the change does.
            let output = FileHandle.standardOutput
            for await change in changes { output.write(Data((Self.line(change, bucket: name) + "\n").utf8)) }
            done.signal()
        }
        printError("watching bucket \(bucket)")
        done.wait()
    }

    /// The JSON line of `change`.
    static func line(_ change: BucketChange, bucket: String) -> String {
        let head = "{\"bucket\":\(BucketJSON.string(bucket)),"
        switch change {
        case .put(let key): return head + "\"key\":\(BucketJSON.string(key)),\"change\":\"put\"}"
        case .remove(let key): return head + "\"key\":\(BucketJSON.string(key)),\"change\":\"remove\"}"
        case .resync(let reason): return head + "\"change\":\"resync\",\"reason\":\"\(reason.rawValue)\"}"
        }
    }
}
