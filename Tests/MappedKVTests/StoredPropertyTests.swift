import Foundation
import Logging
import MappedKVFormat
import Synchronization
import Testing

@testable import MappedKV

/// Collects log messages, so a test can see what a `@Stored` property reported.
final class CollectedLog: Sendable {
    let messages = Mutex<[(level: Logger.Level, message: String, metadata: String)]>([])

    var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    struct Handler: LogHandler {
        let log: CollectedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            log.messages.withLock { $0.append((event.level, "\(event.message)", "\(all)")) }
        }
    }
}

/// Settings kept in a store through `@Stored` properties.
final class AppSettings {
    @Stored<Int> var launches: Int
    @Stored<String?> var userName: String?
    @Stored<[String]> var recent: [String]

    init(store: MappedKV) {
        _launches = Stored(wrappedValue: 0, "launches", in: store)
        _userName = Stored("user", in: store)
        _recent = Stored(wrappedValue: [], "recent", in: store)
    }
}

@Suite struct StoredPropertyTests {
    struct Window: Codable, Equatable, Sendable { var width: Int }

    @Test func aLocalPropertyReadsAndWritesTheStore() throws {
        let dir = TemporaryDirectory("stored-local")
        let store = try MappedKV(id: "s", directory: dir.path)
        @Stored("launches", in: store) var launches = 0
        #expect(launches == 0)
        #expect(try store.contains("launches") == false, "reading the default writes nothing")
        launches += 1
        launches += 1
        #expect(try store.int(forKey: "launches") == 2)
        #expect(try store.payload(forKey: "launches") == [0x02], "an Int is MMKV's int64 varint")
        try store.set(40, forKey: "launches")
        #expect(launches == 40, "every read goes to the store")

        @Stored("window", in: store) var window = Window(width: 10)
        window.width = 20
        #expect(try store.value(forKey: "window", as: Window.self) == Window(width: 20))

        @Stored("id", in: store) var id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        id = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
        #expect(try store.string(forKey: "id") == "00000000-0000-0000-0000-000000000001")
    }

    @Test func aClassWithStoredPropertiesPersistsAcrossInstances() throws {
        let dir = TemporaryDirectory("stored-class")
        do {
            let store = try MappedKV(id: "s", directory: dir.path)
            let settings = AppSettings(store: store)
            settings.launches += 1
            settings.userName = "ada"
            settings.recent.append("a.txt")
            store.close()
        }
        let store = try MappedKV(id: "s", directory: dir.path)
        let settings = AppSettings(store: store)
        #expect(settings.launches == 1)
        #expect(settings.userName == "ada")
        #expect(settings.recent == ["a.txt"])
        #expect(try store.string(forKey: "user") == "ada", "an optional's value is stored natively")
        settings.userName = nil
        #expect(try store.contains("user") == false, "assigning nil removes the key")
        #expect(settings.userName == nil)
    }

    @Test func anOptionalWithANonNilDefault() throws {
        let dir = TemporaryDirectory("stored-optional")
        let store = try MappedKV(id: "s", directory: dir.path)
        @Stored("theme", in: store) var theme: String? = "light"
        #expect(theme == "light", "absent reads as the default")
        theme = "dark"
        #expect(try store.string(forKey: "theme") == "dark")
        theme = nil
        #expect(try store.contains("theme") == false)
        #expect(theme == "light")
    }

    @Test func errorsAreLoggedByThePropertyAndThrownByTheProjectedValue() throws {
        let dir = TemporaryDirectory("stored-errors")
        let log = CollectedLog()
        let store = try MappedKV(id: "s", directory: dir.path, logger: log.logger)
        try store.set("not a number", forKey: "count")
        @Stored("count", in: store) var count = Int32(5)
        #expect(count == 5, "an unreadable value reads as the default")
        #expect(throws: MappedKVError.self) { _ = try $count.read() }
        let logged = log.messages.withLock { $0.filter { $0.level == .error } }
        #expect(logged.count == 1)
        #expect(logged.first?.metadata.contains("count") == true)

        try $count.write(8)
        #expect(try $count.read() == 8)
        try $count.remove()
        #expect(try store.contains("count") == false)
        #expect(count == 5)

        store.close()
        count = 9  // dropped and logged: the handle is closed
        #expect(throws: MappedKVError.self) { try $count.write(9) }
        #expect(log.messages.withLock { $0.filter { $0.level == .error }.count } == 2)
    }

    @Test func aWrapperIsSendableAndSharedBetweenTasks() async throws {
        let dir = TemporaryDirectory("stored-sendable")
        let store = try MappedKV(id: "s", directory: dir.path)
        let hits = Stored(key: "hits", in: store, default: Int64(0))
        let _: any Sendable = hits  // a `let` of the wrapper may be global or shared
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<50 {
                        try store.withExclusiveLock { tx in
                            try tx.set(try tx.int64(forKey: "hits", default: 0) + 1, forKey: "hits")
                        }
                        _ = hits.wrappedValue  // the wrapper crosses into concurrent tasks
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(hits.wrappedValue == 200)
        hits.wrappedValue = 0
        #expect(try store.int64(forKey: "hits") == 0)
    }
}
