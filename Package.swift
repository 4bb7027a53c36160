// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "MappedKV",
    products: [
        .library(name: "MappedKV", targets: ["MappedKV"]),
        .library(name: "MappedKVFormat", targets: ["MappedKVFormat"]),
        .library(name: "MappedKVCache", targets: ["MappedKVCache"]),
        .library(name: "MappedKVCollections", targets: ["MappedKVCollections"]),
        .executable(name: "mappedkv", targets: ["mappedkv"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // API only: the caches and the store report through it when asked to (a metrics label prefix).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        // Documentation only: `swift package generate-documentation`; no target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // C system libraries: thin module maps, linked through pkg-config.
        .systemLibrary(
            name: "CLibCrypto",
            path: "Sources/CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // CRC-32 by carry-less multiplication folding, bit-identical to zlib's crc32.
        .target(name: "CCRC32"),
        // Layer 1: the file format. Pure: no I/O.
        .target(name: "MappedKVFormat", dependencies: ["CCRC32", "CZlib"]),
        // Layer 2: cryptography through libcrypto.
        .target(name: "MappedKVCrypto", dependencies: ["CLibCrypto"]),
        // Atomics over shared mappings and the futex call, for the shared-memory lock.
        .target(name: "CFutex"),
        // Layer 3: files, mappings and locks.
        .target(name: "MappedKVIO", dependencies: ["CFutex"]),
        // A cache prefetch hint, for the store's hash index.
        .target(name: "CPrefetch"),
        // Layer 4 and 5: the store and its public API.
        .target(
            name: "MappedKV",
            dependencies: [
                "CPrefetch",
                "MappedKVFormat",
                "MappedKVCrypto",
                "MappedKVIO",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // On the public API: a memory and disk object cache.
        .target(
            name: "MappedKVCache",
            dependencies: [
                "MappedKV",
                "MappedKVCrypto",
                "MappedKVFormat",
                "MappedKVIO",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // On the public API: buckets of entries with metadata, in a collection store.
        .target(
            name: "MappedKVCollections",
            dependencies: [
                "MappedKV",
                "MappedKVFormat",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Layer 6: the command-line tool.
        .executableTarget(
            name: "mappedkv",
            dependencies: [
                "MappedKV",
                "MappedKVCache",
                "MappedKVCollections",
                "MappedKVFormat",
                "MappedKVIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libFuzzer's driver entry point, declared for Swift: no code, nothing to link unless
        // tools/fuzz.sh builds with -sanitize=fuzzer.
        .systemLibrary(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),
        // The fuzz target for loading, recovery and inspection (tools/fuzz/README.md). Part of the
        // package so that every build compiles it against the current API, `package` declarations
        // included; a plain build replays inputs, tools/fuzz.sh builds the libFuzzer binary.
        .executableTarget(
            name: "mappedkv-fuzz",
            dependencies: ["CLibFuzzer", "MappedKV", "MappedKVCrypto", "MappedKVFormat"]
        ),
        .testTarget(name: "MappedKVFormatTests", dependencies: ["MappedKVFormat", "CCRC32", "CZlib"]),
        .testTarget(name: "MappedKVCryptoTests", dependencies: ["MappedKVCrypto", "MappedKVFormat"]),
        .testTarget(name: "MappedKVIOTests", dependencies: ["MappedKVIO"]),
        .testTarget(
            name: "MappedKVCacheTests",
            dependencies: [
                "MappedKVCache", "MappedKV", "MappedKVFormat", "MappedKVIO",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]),
        .testTarget(
            name: "MappedKVCollectionsTests", dependencies: ["MappedKVCollections", "MappedKV", "MappedKVFormat"]),
        .testTarget(
            name: "MappedKVTests",
            dependencies: [
                "MappedKV", "MappedKVFormat", "MappedKVCrypto", "MappedKVIO", "MappedKVCollections", "MappedKVCache",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]),
        // What the two targets below share to run the `mappedkv` binary as a child process (the
        // binary's location, `mappedkv hold`, temporary directories): test support in `package`
        // declarations, which no product exposes.
        .target(name: "MappedKVProcessTestSupport", path: "Tests/MappedKVProcessTestSupport"),
        // The CLI itself: its commands, arguments, output and exit statuses.
        .testTarget(
            name: "MappedKVCLITests",
            dependencies: [
                "mappedkv", "MappedKVProcessTestSupport", "MappedKV", "MappedKVCollections", "MappedKVCrypto",
                "MappedKVFormat",
            ]),
        // The libraries across processes: this process uses a store, a cache or a collection store
        // while `mappedkv` children share it.
        .testTarget(
            name: "MappedKVMultiProcessTests",
            dependencies: [
                "mappedkv", "MappedKVProcessTestSupport", "MappedKV", "MappedKVCache", "MappedKVCollections",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]),
    ]
)
