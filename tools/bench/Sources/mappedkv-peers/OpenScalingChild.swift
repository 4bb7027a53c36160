import ArgumentParser
import Foundation

/// `mappedkv-peers open-child`: the open-scaling bench's child processes, this executable again
/// (hidden from the help). A child opens its store in the configuration the parent's stores use
/// (for MappedKV, ``OpenScalingVariant``, with the `--index-file` choice the parent left in the
/// environment) and reports on standard output, which the parent reads to the end.
///
/// - `get`: opens the store, prints the Int32 value of `--key` and exits: LMDB's fresh process
///   (MappedKV's is the `mappedkv get` tool).
/// - `read`: warms up on a tiny store of the same kind, reads its memory, opens the store while the
///   parent holds it open, gets `--gets` random keys (their sum checked), and prints its memory.
/// - `overwrite`: sets every tenth key i to ``overwrittenValue(_:)``, then
///   ``OpenScalingStore/writeBack()``.
/// - `noop`: nothing: what a start and an exit of this executable cost.
struct OpenScalingChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open-child", abstract: "A child process of --open-scaling.", shouldDisplay: false)

    enum Action: String, ExpressibleByArgument {
        case get, read, overwrite, noop
    }

    /// The writer overwrites keys 0, 10, 20 and so on: a tenth of them.
    static let overwriteStride = 10

    @Argument var action: Action
    @Option var store: OpenScalingKind = .mappedkv
    @Option var directory = ""
    @Option var key = ""
    /// The store's keys (not `--n`, which the parent command's `--n` would take).
    @Option(name: .customLong("keys")) var n = 0
    @Option var gets = 0
    @Option var seed: UInt64 = 0

    /// The value the writer leaves under key i: distinct from i, so that a reader that did not catch
    /// up reads the old value and fails the check.
    static func overwrittenValue(_ index: Int) -> Int32 { ~WorkloadData.intValue(index) }

    /// This executable, for the parent to start.
    static func executable() throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// The arguments of a child that does `action` on the store `kind` in `directory`.
    static func arguments(
        _ action: Action, store kind: OpenScalingKind, directory: String, key: String = "", n: Int = 0, gets: Int = 0,
        seed: UInt64 = 0
    ) -> [String] {
        [
            "open-child", action.rawValue, "--store", kind.rawValue, "--directory", directory, "--key", key, "--keys",
            "\(n)",
            "--gets", "\(gets)", "--seed", "\(seed)",
        ]
    }

    func run() throws {
        do {
            switch store {
            case .mappedkv: try run(MappedKVStore<OpenScalingVariant>.self)
            case .lmdb: try run(LMDBStore.self)
            }
        } catch {
            FileHandle.standardError.write(Data("mappedkv-peers open-child: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    private func run<S: OpenScalingStore>(_: S.Type) throws {
        switch action {
        case .noop:
            return
        case .get:
            let opened = try S(directory: directory)
            defer { try? opened.close() }
            guard let value = try opened.int32(forKey: key) else { throw BenchError("no value for \(key)") }
            print(value)
        case .read:
            try read(S.self)
        case .overwrite:
            let opened = try S(directory: directory)
            defer { try? opened.close() }
            for i in stride(from: 0, to: n, by: Self.overwriteStride) {
                try opened.setInt32(Self.overwrittenValue(i), forKey: "int-\(i)")
            }
            try opened.writeBack()
        }
    }

    private func read<S: OpenScalingStore>(_: S.Type) throws {
        let warmup = try Scratch.directory("\(directory)-child-warmup")
        let tiny = try S(directory: warmup)
        try tiny.setInt32(1, forKey: "int-1")
        try tiny.close()
        let reopened = try S(directory: warmup)
        _ = try reopened.int32(forKey: "int-1")
        try reopened.close()
        try Scratch.remove(warmup)

        let before = try ResidentMemory.current()
        let privateBefore = try ResidentMemory.privateKiB()
        let opened = try S(directory: directory)
        defer { try? opened.close() }
        var random = SplitMix64(seed: seed)
        var sum: Int64 = 0
        var expected: Int64 = 0
        for _ in 0..<gets {
            let index = OpenScalingMeasurement.pick(n, &random)
            sum &+= Int64(try opened.int32(forKey: "int-\(index)") ?? -1)
            expected &+= Int64(WorkloadData.intValue(index))
        }
        guard sum == expected else { throw BenchError("\(gets) random gets summed \(sum), expected \(expected)") }
        let after = try ResidentMemory.current()
        let privateAfter = try ResidentMemory.privateKiB()
        let privateTotal = privateAfter.clean + privateAfter.dirty
        let privateTotalBefore = privateBefore.clean + privateBefore.dirty
        print(
            "rss_anon_kb=\(after.anonymous) private_kb=\(privateTotal) private_clean_kb=\(privateAfter.clean) "
                + "vm_rss_kb=\(after.total) rss_anon_before_kb=\(before.anonymous) "
                + "private_before_kb=\(privateTotalBefore)")
    }
}
