// swift-tools-version:6.0
import PackageDescription

// The Hummingbird integration of MappedKV: a `PersistDriver` over a multi-process MappedKV store, so that
// several worker processes of one Hummingbird app on one host share sessions, counters and cached values
// without a networked store. It depends on the core by path, so the core keeps its own dependencies.
let package = Package(
    name: "hummingbird-mappedkv",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "HummingbirdMappedKV", targets: ["HummingbirdMappedKV"]),
        .executable(name: "HummingbirdMappedKVExample", targets: ["HummingbirdMappedKVExample"]),
        .executable(name: "HummingbirdMappedKVBench", targets: ["HummingbirdMappedKVBench"]),
    ],
    dependencies: [
        .package(name: "MappedKV", path: "../.."),
        // 2.25.0 is the first release whose `PersistDriver` has `getWithTTL`, which the driver implements.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.25.0"),
        // Sessions: the example app's `SessionMiddleware`, and hummingbird-auth's own session tests.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // Tests only: the HTTP types and buffers of HummingbirdTesting's client.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        // Tests only: a metrics factory that records, to check the options reach the store.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
    ],
    targets: [
        .target(
            name: "HummingbirdMappedKV",
            dependencies: [
                .product(name: "MappedKV", package: "MappedKV"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "HummingbirdMappedKVExample",
            dependencies: [
                "HummingbirdMappedKV",
                .product(name: "MappedKV", package: "MappedKV"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The README's complete rate-limiting app: the README's block is a copy of its main.swift, which
        // the core's DocumentationExampleTests keeps equal.
        .executableTarget(
            name: "HummingbirdMappedKVRateLimitExample",
            dependencies: [
                "HummingbirdMappedKV",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "HummingbirdMappedKVBench",
            dependencies: [
                "HummingbirdMappedKV",
                .product(name: "MappedKVCache", package: "MappedKV"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "HummingbirdMappedKVTests",
            dependencies: [
                "HummingbirdMappedKV",
                .product(name: "MappedKV", package: "MappedKV"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // Hummingbird's and hummingbird-auth's own persist and session tests, run as written on this
        // driver: ci.sh copies them into Upstream/ (not committed) and swaps only the driver they make.
        .testTarget(
            name: "FrameworkTests",
            dependencies: [
                "HummingbirdMappedKV",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "HummingbirdAuthTesting", package: "hummingbird-auth"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
    ]
)
