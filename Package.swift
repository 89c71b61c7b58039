// swift-tools-version: 6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Spoor",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Spoor", targets: ["SpoorTracker", "SpoorTransport", "SpoorSerializer", "SpoorCore"]),
        // Its own product: an app opts into method swizzling by linking it, never by linking Spoor.
        .library(name: "SpoorAutoCapture", targets: ["SpoorAutoCapture"]),
        .executable(name: "spoor", targets: ["SpoorCLI"]),
        // Realistic event streams, for the benchmarks package and tests; apps do not need it.
        .library(name: "SpoorWorkload", targets: ["SpoorWorkload"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // Only the `spoor` tool uses it; no library target depends on it.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // System C libraries, found through pkg-config.
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // protobuf-c generated code and the hand-written shim Swift talks to.
        .target(
            name: "CSpoorProtobuf",
            cSettings: [.headerSearchPath("generated")],
            linkerSettings: [.linkedLibrary("protobuf-c")]
        ),

        // CRC-32C: the CPU's instructions where it has them, tables elsewhere.
        .target(name: "CSpoorCRC"),

        // The event model: events and typed property values. Every Swift module builds on it.
        .target(name: "SpoorCore", swiftSettings: strictSwift),
        // Protobuf encoding and decoding of events, over the C shim.
        .target(
            name: "SpoorSerializer",
            dependencies: ["SpoorCore", "CSpoorProtobuf"],
            swiftSettings: strictSwift
        ),
        // The durable event log, batch frames, compression and upload.
        .target(
            name: "SpoorTransport",
            dependencies: [
                "SpoorCore", "SpoorSerializer", "CZstd", "CZlib", "CSpoorCRC",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // The tracker: the API apps call, auto-tracking and lifecycle.
        .target(
            name: "SpoorTracker",
            dependencies: [
                "SpoorCore", "SpoorSerializer", "SpoorTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift
        ),

        // Page and click capture without code: the platform-neutral model, and UIKit/SwiftUI glue.
        .target(name: "SpoorAutoCapture", dependencies: ["SpoorTracker"], swiftSettings: strictSwift),
        // Realistic event streams (an iPhone app session, a Linux service), deterministic by seed.
        .target(name: "SpoorWorkload", dependencies: ["SpoorCore"], path: "Benchmarks/Workload", swiftSettings: strictSwift),

        // The command-line tool.
        .executableTarget(
            name: "SpoorCLI",
            dependencies: [
                "SpoorCore", "SpoorSerializer", "SpoorTransport", "SpoorTracker",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift
        ),

        // A helper process for the transport's crash, disk-full and memory tests.
        .executableTarget(
            name: "SpoorCrashChild",
            dependencies: [
                "SpoorCore", "SpoorSerializer", "SpoorTransport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),

        // What the test targets share: temporary directories, log capture.
        .target(
            name: "SpoorTestSupport",
            dependencies: [
                "SpoorCore", "SpoorTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/SpoorTestSupport",
            swiftSettings: strictSwift
        ),

        .testTarget(
            name: "SpoorSerializerTests",
            dependencies: ["SpoorCore", "SpoorSerializer"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SpoorTransportTests",
            dependencies: [
                "SpoorCore", "SpoorSerializer", "SpoorTransport", "SpoorTestSupport", "SpoorWorkload",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SpoorTrackerTests",
            dependencies: [
                "SpoorCore", "SpoorSerializer", "SpoorTransport", "SpoorTracker", "SpoorTestSupport", "SpoorWorkload",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SpoorAutoCaptureTests",
            dependencies: ["SpoorCore", "SpoorTracker", "SpoorAutoCapture"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SpoorCLITests",
            dependencies: ["SpoorCore", "SpoorSerializer", "SpoorTransport", "SpoorTracker"],
            swiftSettings: strictSwift
        ),
    ]
)
