// swift-tools-version:6.0
// The libFuzzer target for MappedKV's load, recovery and inspection paths (issue 5). A separate
// package, so the main package's build and tests never see it. Build and run it with
// tools/fuzz.sh, which adds -sanitize=fuzzer,address: a plain `swift build` here does not link.
import PackageDescription

let package = Package(
    name: "MappedKVFuzz",
    dependencies: [
        // Named, so the product references below work whatever the checkout's directory is called
        // (a path dependency's identity is its directory name).
        .package(name: "MappedKV", path: "../..")
    ],
    targets: [
        // libFuzzer's driver entry point, declared for Swift; no code, nothing to link.
        .systemLibrary(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),
        .executableTarget(
            name: "mappedkv-fuzz",
            dependencies: [
                "CLibFuzzer",
                .product(name: "MappedKV", package: "MappedKV"),
                .product(name: "MappedKVFormat", package: "MappedKV"),
            ],
            path: "Sources/MappedKVFuzz",
            // LLVMFuzzerTestOneInput is the entry point: no top-level code, no Swift main.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
