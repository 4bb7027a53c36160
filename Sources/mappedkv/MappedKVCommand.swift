import ArgumentParser
import MappedKV

/// The `mappedkv` command-line tool.
@main
struct MappedKVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mappedkv",
        abstract: "Read, write and check MMKV-compatible key-value stores.",
        discussion: """
            Every command exits with the same statuses: 0 ok, 1 key not found, 2 other failure \
            (a bad value, a value of another type, an I/O error), 3 store not found, 4 store damaged, \
            5 wrong key, 6 locked or held in another mode (another process has it open in \
            single-process mode), and 64 for a usage error.
            """,
        version: MappedKV.version,
        subcommands: [
            DemoCommand.self, ApplyCommand.self, DumpCommand.self, ExportCommand.self, ImportCommand.self,
            GetCommand.self, SetCommand.self,
            RemoveCommand.self, KeysCommand.self, InfoCommand.self, VerifyCommand.self, RepairCommand.self,
            RekeyCommand.self, ExpireCommand.self, BenchCommand.self,
            CacheCommand.self, BucketCommand.self, StressCommand.self, StressChildCommand.self,
            HoldCommand.self, WatchCommand.self,
            BackupCommand.self, RestoreCommand.self, RemoveStoreCommand.self, ListStoresCommand.self,
        ]
    )
}
