// swift-tools-version: 6.1
// spoor-collector: the ingestion server (docs/collector.md). A nested package so that an app
// embedding the `Spoor` product never fetches NIO, Hummingbird or a database driver.
//
//   swift build -c release --product spoor-collector
//   swift test
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "SpoorCollector",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "spoor-collector", targets: ["SpoorCollector"]),
        .library(name: "SpoorCollectorCore", targets: ["SpoorCollectorCore"]),
        .executable(name: "spoor-collector-load", targets: ["SpoorCollectorLoad"]),
    ],
    dependencies: [
        // The root package; its folder name differs between checkouts, so it is named here.
        .package(name: "Spoor", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
    ],
    targets: [
        // The request core: body → frame → events → rows, the status decisions, and the stores.
        // No HTTP server in here, so the fuzz target and the tests call it directly.
        .target(
            name: "SpoorCollectorCore",
            dependencies: [
                .product(name: "SpoorWire", package: "Spoor"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // The PostgreSQL store, apart from the core so the fuzz target does not build postgres-nio.
        .target(
            name: "SpoorCollectorPostgres",
            dependencies: [
                "SpoorCollectorCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // The server: HTTP, command line, signals, /metrics.
        .executableTarget(
            name: "SpoorCollector",
            dependencies: [
                "SpoorCollectorCore",
                "SpoorCollectorPostgres",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSwift
        ),
        // scripts/collector-load: concurrent clients posting realistic frames, and the decode-only rate.
        .executableTarget(
            name: "SpoorCollectorLoad",
            dependencies: [
                "SpoorCollectorCore", "SpoorFaultProxy",
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "SpoorWorkload", package: "Spoor"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift
        ),
        // A scripted fault-injecting HTTP proxy and a restartable collector process, for the end-to-end tests;
        // CollectorLaunch, how tests and the load tool start a collector.
        .target(name: "SpoorFaultProxy", swiftSettings: strictSwift),
        // The kill -9 tests' child: a tracker that tracks and uploads until it is killed.
        .executableTarget(
            name: "SpoorUploadChild",
            dependencies: [.product(name: "Spoor", package: "Spoor")],
            swiftSettings: strictSwift
        ),
        // What the test targets share: a real collector process on loopback, and frames to send it.
        .target(
            name: "SpoorCollectorTestSupport",
            dependencies: ["SpoorFaultProxy", .product(name: "Spoor", package: "Spoor")],
            path: "Tests/SpoorCollectorTestSupport",
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SpoorCollectorTests",
            dependencies: [
                "SpoorCollectorCore", "SpoorCollectorTestSupport",
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "GRDB", package: "GRDB.swift"),  // StoreFailureTests locks the SQLite file
            ],
            swiftSettings: strictSwift
        ),
        // The tracker uploading to a real collector process: every event stored exactly once.
        .testTarget(
            name: "SpoorEndToEndTests",
            dependencies: [
                "SpoorCollectorTestSupport",
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift
        ),
        // The proxy itself, each fault end to end through a real tracker, and the kill -9 rounds.
        .testTarget(
            name: "SpoorFaultTests",
            dependencies: [
                "SpoorFaultProxy", .product(name: "Spoor", package: "Spoor"), .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift
        ),
    ]
)
