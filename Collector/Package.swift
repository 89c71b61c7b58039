// swift-tools-version: 6.1
// spoor-collector: the ingestion server (docs/collector.md). A nested package so that an app embedding the
// `Spoor` product never fetches NIO, Hummingbird or a database driver. The collector builds on the root's
// `SpoorWire` product (the event model and its encodings) and the `SpoorSystem` product (the concurrency vocabulary
// every Spoor package shares); the tracker (`Spoor`) is for tests only.
//
//   swift build -c release --product spoor-collector
//   swift test
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let spoorWire: Target.Dependency = .product(name: "SpoorWire", package: "Spoor")
/// The concurrency vocabulary every Spoor package shares: `Locked` (the one lock), `Promise` (a value delivered
/// once, the one "first of result or deadline"), `onThreadOfItsOwn` (blocking work off the cooperative pool) and
/// the `Duration` conversions. Not tracker code: it depends on nothing.
let spoorSystem: Target.Dependency = .product(name: "SpoorSystem", package: "Spoor")

let package = Package(
    name: "SpoorCollector",
    platforms: [.macOS(.v15)],
    products: [
        // The server.
        .executable(name: "spoor-collector", targets: ["SpoorCollector"]),
        // Measures a collector on this machine against a store: batches/s, latency, memory.
        .executable(name: "spoor-collector-load", targets: ["SpoorCollectorLoad"]),
        // The request core and the embedded store, for the fuzz package.
        .library(name: "SpoorCollectorCore", targets: ["SpoorCollectorCore"]),
        .library(name: "SpoorCollectorSQLite", targets: ["SpoorCollectorSQLite"]),
    ],
    dependencies: [
        // The root package; its folder name differs between checkouts, so it is named here. Its `ServiceLifecycle`
        // trait brings TrackerService, for the end-to-end tests (swift-service-lifecycle is already a dependency here).
        .package(name: "Spoor", path: "..", traits: [.defaults, "ServiceLifecycle"]),
        // The example server (Examples/ServerTracking), built here for its end-to-end test so that `make test` builds
        // Hummingbird once, for the collector and the example together.
        .package(name: "ServerTracking", path: "../Examples/ServerTracking"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        // Constant-time token digests; already in the graph through postgres-nio.
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        // TLS for HTTPS and PostgreSQL; already in the graph through postgres-nio and Hummingbird.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", exact: "2.37.6"),
    ],
    targets: [
        // The request core: body → frame → events → rows, the status each body earns, and the store protocol
        // (`BatchStore`, a service) the stores below implement. No HTTP server and no database driver in here,
        // so the fuzz target and the tests call it directly.
        .target(
            name: "SpoorCollectorCore",
            dependencies: [
                spoorWire, spoorSystem,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift
        ),
        // The embedded store: one SQLite file through GRDB.
        .target(
            name: "SpoorCollectorSQLite",
            dependencies: [
                "SpoorCollectorCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),  // binds rows' bytes with the C API
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift
        ),
        // The shared store: PostgreSQL through postgres-nio's pooled client.
        .target(
            name: "SpoorCollectorPostgres",
            dependencies: [
                "SpoorCollectorCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // The NATS C client (libnats, `apt install libnats-dev`), for the JetStream store.
        .systemLibrary(name: "CNats", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),
        // The scale-out store: batch frames published to a NATS JetStream stream, and the drain that moves them into SQL.
        .target(
            name: "SpoorCollectorNATS",
            dependencies: [
                "SpoorCollectorCore", "CNats", spoorSystem,
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift
        ),
        // The server: HTTP, command line, the service group that runs the server and its store, /metrics.
        .executableTarget(
            name: "SpoorCollector",
            dependencies: [
                "SpoorCollectorCore", "SpoorCollectorSQLite", "SpoorCollectorPostgres", "SpoorCollectorNATS", spoorWire, spoorSystem,
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The live events page, compiled into the binary (no files to install, nothing fetched).
            resources: [.embedInCode("LivePage/index.html"), .embedInCode("LivePage/live.css"), .embedInCode("LivePage/live.js")],
            swiftSettings: strictSwift
        ),
        // Driving a collector process from outside: starting it until it listens, blocking HTTP/1.1 on loopback,
        // its memory and CPU time. The load tool and the tests (the fault proxy, collector processes) share it.
        .target(name: "SpoorLoopback", dependencies: [spoorSystem], swiftSettings: strictSwift),
        // scripts/collector-load: concurrent clients posting realistic frames, and the decode-only rate.
        .executableTarget(
            name: "SpoorCollectorLoad",
            dependencies: [
                "SpoorCollectorCore", "SpoorCollectorSQLite", "SpoorLoopback", spoorWire, spoorSystem,
                .product(name: "SpoorWorkload", package: "Spoor"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift
        ),

        // Test infrastructure, under Tests/: none of it is in a product.

        // A scripted fault-injecting HTTP proxy, in front of a real collector process.
        .target(
            name: "SpoorFaultProxy",
            dependencies: ["SpoorCollectorCore", "SpoorLoopback", spoorSystem],
            path: "Tests/SpoorFaultProxy",
            swiftSettings: strictSwift
        ),
        // The kill -9 tests' child: a tracker that tracks and uploads until it is killed.
        .executableTarget(
            name: "SpoorUploadChild",
            dependencies: [.product(name: "Spoor", package: "Spoor"), spoorSystem],
            path: "Tests/SpoorUploadChild",
            swiftSettings: strictSwift
        ),
        // What the test targets share: real collector processes on loopback (restartable), and frames to send them.
        .target(
            name: "SpoorCollectorTestSupport",
            dependencies: ["SpoorLoopback", spoorWire, spoorSystem],
            path: "Tests/SpoorCollectorTestSupport",
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SpoorCollectorTests",
            dependencies: [
                "SpoorCollectorCore", "SpoorCollectorSQLite", "SpoorCollectorTestSupport", "SpoorLoopback", "SpoorFaultProxy", spoorWire,
                spoorSystem,
                .product(name: "SpoorWorkload", package: "Spoor"),  // realistic events for EventRowsTests
                .product(name: "GRDB", package: "GRDB.swift"),  // StoreFailureTests locks the SQLite file
            ],
            swiftSettings: strictSwift
        ),
        // The tracker uploading to a real collector process: every event stored exactly once; the tracker as a service
        // in a ServiceGroup; the example server (a process of its own) shut down with SIGTERM losing nothing.
        .testTarget(
            name: "SpoorEndToEndTests",
            dependencies: [
                "SpoorCollectorTestSupport", "SpoorFaultProxy", "SpoorLoopback", spoorSystem,
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "SpoorServiceLifecycle", package: "Spoor"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // Built, not linked: the test starts it as a process (CollectorProcess.builtProduct finds it).
                .product(name: "server-tracking", package: "ServerTracking"),
            ],
            swiftSettings: strictSwift
        ),
        // The proxy itself, each fault end to end through a real tracker, and the kill -9 rounds.
        .testTarget(
            name: "SpoorFaultTests",
            dependencies: [
                "SpoorFaultProxy", "SpoorCollectorTestSupport", "SpoorLoopback", "SpoorCollectorCore", spoorSystem,
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "SpoorTesting", package: "Spoor"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift
        ),
    ]
)
