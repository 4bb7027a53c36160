// swift-tools-version:6.0
// MappedKV against its peers (SQLite, LMDB, Foundation's UserDefaults), MappedKV's scaling, and
// MappedKVCache against other disk cache designs (SQLite + files, file per entry, plain files).
//
// A separate package so that the main package never needs SQLite or LMDB: build and run it with
// `tools/bench.sh`, which installs the C libraries when they are missing.
import PackageDescription

let package = Package(
    name: "MappedKVBench",
    dependencies: [
        // Named, so that the product references below do not depend on the directory the
        // repository was cloned into (a path dependency's identity is otherwise its directory name).
        .package(name: "MappedKV", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // No pkgConfig: the header is in /usr/include and not every distribution ships lmdb.pc.
        .systemLibrary(
            name: "CLMDB",
            path: "Sources/CLMDB",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // glibc's heap statistics (mallinfo2), for the memory an index holds.
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
        // MappedKVFormat's CRC32.update, which is `package`: the root package's Sources/CCRC32,
        // linked into Sources/CBenchCRC32 and compiled under other names, and zlib.
        .target(
            name: "CBenchCRC32",
            cSettings: [
                .define("mkv_crc32_fold_available", to: "bench_crc32_fold_available"),
                .define("mkv_crc32_fold_width", to: "bench_crc32_fold_width"),
                .define("mkv_crc32_fold_limited", to: "bench_crc32_fold_limited"),
                .define("mkv_crc32_fold", to: "bench_crc32_fold"),
            ],
            linkerSettings: [.linkedLibrary("z")]
        ),
        .executableTarget(
            name: "mappedkv-peers",
            dependencies: [
                "CBenchCRC32",
                "CMalloc",
                "CSQLite",
                "CLMDB",
                .product(name: "MappedKV", package: "MappedKV"),
                .product(name: "MappedKVCache", package: "MappedKV"),
                .product(name: "MappedKVCollections", package: "MappedKV"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ]
)
