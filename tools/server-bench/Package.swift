// swift-tools-version:6.0
// The server bench: one Vapor app whose cache provider is chosen at start (MappedKV, Vapor's memory
// cache, Fluent on SQLite, Fluent on PostgreSQL), driven by run.sh with wrk. A package of its own:
// Fluent and its drivers take minutes to build, and .ci/run does not build it.
import PackageDescription

let package = Package(
    name: "server-bench",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "ServerBench", targets: ["ServerBench"])
    ],
    dependencies: [
        .package(name: "vapor-mappedkv", path: "../../Integrations/vapor-mappedkv"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.100.0"),
        .package(url: "https://github.com/vapor/fluent.git", from: "4.12.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver.git", from: "4.8.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "ServerBench",
            dependencies: [
                .product(name: "VaporMappedKV", package: "vapor-mappedkv"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
            ]
        )
    ]
)
