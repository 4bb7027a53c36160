import ArgumentParser
import MappedKV

/// The `mappedkv` command-line tool.
@main
struct MappedKVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mappedkv",
        abstract: "Read, write and check MMKV-compatible key-value stores.",
        discussion: "Every command exits with the same statuses. \(ExitStatus.helpText)",
        version: MappedKV.version,
        subcommands: [
            DemoCommand.self, ApplyCommand.self, DumpCommand.self, ExportCommand.self, ImportCommand.self,
            GetCommand.self, SetCommand.self,
            RemoveCommand.self, KeysCommand.self, InfoCommand.self, VerifyCommand.self, RepairCommand.self,
            RekeyCommand.self, ExpireCommand.self, IncrementCommand.self, BenchCommand.self,
            CacheCommand.self, BucketCommand.self, StressCommand.self, StressChildCommand.self, TidyLoadCommand.self,
            CollectionsChildCommand.self,
            HoldCommand.self, WatchCommand.self,
            BackupCommand.self, RestoreCommand.self, RemoveStoreCommand.self, ListStoresCommand.self,
        ]
    )
}
