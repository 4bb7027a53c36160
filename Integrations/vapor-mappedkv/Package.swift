// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "vapor-mappedkv",
    products: [
        .library(name: "VaporMappedKV", targets: ["VaporMappedKV"]),
        .executable(name: "VaporMappedKVExample", targets: ["VaporMappedKVExample"]),
        .executable(name: "VaporMappedKVBench", targets: ["VaporMappedKVBench"]),
        .executable(name: "VaporMappedKVHTTPBench", targets: ["VaporMappedKVHTTPBench"]),
    ],
    dependencies: [
        .package(name: "MappedKV", path: "../.."),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.100.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        // Tests only: a metrics factory that records what the stores report.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        // Tests only: the HTTP client that talks to the example app's processes.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.24.0"),
    ],
    targets: [
        .target(
            name: "VaporMappedKV",
            dependencies: [
                .product(name: "MappedKV", package: "MappedKV"),
                .product(name: "MappedKVCache", package: "MappedKV"),
                .product(name: "MappedKVFormat", package: "MappedKV"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        .executableTarget(
            name: "VaporMappedKVExample",
            dependencies: [
                "VaporMappedKV",
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        // The README's complete rate-limiting app: the README's block is a copy of its main.swift, which
        // the core's DocumentationExampleTests keeps equal.
        .executableTarget(
            name: "VaporMappedKVRateLimitExample",
            dependencies: [
                "VaporMappedKV",
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        .executableTarget(
            name: "VaporMappedKVBench",
            dependencies: [
                "VaporMappedKV",
                .product(name: "MappedKVCache", package: "MappedKV"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        .executableTarget(
            name: "VaporMappedKVHTTPBench",
            dependencies: [
                "VaporMappedKV",
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        .testTarget(
            name: "VaporMappedKVTests",
            dependencies: [
                "VaporMappedKV",
                .product(name: "MappedKVCache", package: "MappedKV"),
                .product(name: "VaporTesting", package: "vapor"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // Vapor's own cache and session tests, copied from the resolved checkout by ci.sh into
        // Tests/FrameworkTests/Upstream (ignored by git) with only the driver changed.
        .testTarget(
            name: "FrameworkTests",
            dependencies: [
                "VaporMappedKV",
                .product(name: "XCTVapor", package: "vapor"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ]
)
