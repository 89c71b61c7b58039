// swift-tools-version: 6.1
// Spoor: the library apps embed. docs/architecture.md has the module map; the nested packages `Tools/` (the
// `spoor` command), `Collector/`, `Benchmarks/`, `Fuzz/` and `Examples/` hold everything an app must never fetch.
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// swift-log and swift-metrics, for the modules that have them; a dependent that only wants the wire format
/// depends on this package with `traits: []`, and SwiftPM then fetches neither.
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Tracker"]))
let metrics: Target.Dependency = .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Tracker"]))
/// swift-service-lifecycle, for the one module that has it: only a dependent that turns the `ServiceLifecycle` trait on
/// fetches it (and swift-async-algorithms and swift-collections with it).
let serviceLifecycle: Target.Dependency = .product(
    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"]))

/// Where the `SystemLibraries` trait links protobuf-c and libzstd: Linux and the other platforms whose package
/// managers have them. Apple's SDKs have neither, so there (and wherever a dependent turns the trait off, as
/// with `traits: ["Tracker"]`) SpoorWire encodes and decodes in Swift and compresses with zlib alone.
let systemLibraryPlatforms: [Platform] = [.linux, .android, .windows]
/// `SPOOR_SYSTEM_LIBRARIES` is defined exactly where SpoorWire links protobuf-c and libzstd, for the code (and the
/// tests) that choose between the two wire paths.
let systemLibrariesDefine: SwiftSetting = .define(
    "SPOOR_SYSTEM_LIBRARIES", .when(platforms: systemLibraryPlatforms, traits: ["SystemLibraries"]))

let package = Package(
    name: "Spoor",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        // What apps embed: the tracker and everything below it.
        .library(name: "Spoor", targets: ["SpoorTracker", "SpoorUpload", "SpoorLog", "SpoorWire", "SpoorModel"]),
        // The event model and its encodings alone (protobuf, batch frames, JSON lines): what a collector needs.
        .library(name: "SpoorWire", targets: ["SpoorWire", "SpoorModel"]),
        // Its own product: an app opts into method swizzling by linking it, never by linking Spoor.
        .library(name: "SpoorAutoCapture", targets: ["SpoorAutoCapture"]),
        // The tracker as a swift-service-lifecycle `Service` (`TrackerService`), for servers that run a `ServiceGroup`.
        // Its code, and its dependency, are there only with the `ServiceLifecycle` trait on.
        .library(name: "SpoorServiceLifecycle", targets: ["SpoorServiceLifecycle"]),
        // Test doubles for code that embeds Spoor: the manual clock, a scripted HTTP client, and the configuration's
        // test seams (its clock, its upload jitter).
        .library(name: "SpoorTesting", targets: ["SpoorTesting"]),
        // Reading logs and storage directories, replaying scenarios: what the `spoor` command (Tools/) is built on.
        .library(name: "SpoorTooling", targets: ["SpoorTooling"]),
        // Realistic event streams, for the benchmarks, the load tools and tests; apps do not need it.
        .library(name: "SpoorWorkload", targets: ["SpoorWorkload"]),
        // The small concurrency vocabulary every Spoor package shares (as swift-nio ships NIOConcurrencyHelpers):
        // `Locked`, the one lock; `Promise`, a value delivered once and the one "first of result or deadline";
        // `SpoorClock`, the one clock; `onThreadOfItsOwn`, the one way to run blocking work off the cooperative pool;
        // the `Duration` conversions. It depends on nothing, so a nested package that links it fetches nothing more.
        .library(name: "SpoorSystem", targets: ["SpoorSystem"]),
    ],
    traits: [
        .trait(name: "Tracker", description: "The tracker, its log and uploader (swift-log, swift-metrics)."),
        .trait(
            name: "SystemLibraries",
            description: "On Linux, Android and Windows: events encoded and decoded by protobuf-c and frames compressed "
                + "with libzstd as well as zlib. Without it, and always on Apple platforms: the Swift codec (the same "
                + "bytes and errors) and zlib alone (docs/wire-paths.md)."
        ),
        .trait(
            name: "ServiceLifecycle",
            description: "TrackerService (the SpoorServiceLifecycle product): the tracker as a swift-service-lifecycle "
                + "Service, flushed and closed on graceful shutdown. Off by default, so an app that does not run a "
                + "ServiceGroup fetches nothing for it.",
            enabledTraits: ["Tracker"]
        ),
        .default(enabledTraits: ["Tracker", "SystemLibraries"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // System C libraries, found through pkg-config. zlib is in every Apple SDK; libzstd is not.
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // The flat event views both decoders fill, and the zero-byte count: plain C that links nothing.
        .target(name: "CSpoorViews"),
        // protobuf-c generated code and the hand-written shim Swift talks to; only SpoorWire's SystemLibraries
        // path depends on it (spoor_generated.c says why it still compiles where protobuf-c is absent).
        .target(
            name: "CSpoorProtobuf",
            dependencies: ["CSpoorViews"],
            exclude: ["generated/spoor/v1/event.pb-c.c"],
            cSettings: [.headerSearchPath("generated")],
            linkerSettings: [.linkedLibrary("protobuf-c", .when(platforms: systemLibraryPlatforms))]
        ),

        // CRC-32C: the CPU's instructions where it has them, tables elsewhere.
        .target(name: "CSpoorCRC"),
        // Atomic loads and adds on a word several processes map (the shared state's change count).
        .target(name: "CSpoorAtomics"),

        // The event model: events and typed property values. Every Swift module builds on it.
        .target(name: "SpoorModel", swiftSettings: strictSwift),
        // The event's encodings: protobuf (over protobuf-c with SystemLibraries, in Swift without), shared
        // contexts, batch frames (CRC-32C, gzip, and zstd with SystemLibraries), varints and JSON lines. No I/O, no
        // threads.
        .target(
            name: "SpoorWire",
            dependencies: [
                "SpoorModel", "CSpoorViews", "CSpoorCRC", "CZlib",
                .target(name: "CSpoorProtobuf", condition: .when(platforms: systemLibraryPlatforms, traits: ["SystemLibraries"])),
                .target(name: "CZstd", condition: .when(platforms: systemLibraryPlatforms, traits: ["SystemLibraries"])),
            ],
            swiftSettings: strictSwift + [systemLibrariesDefine]
        ),
        // What the modules with threads and files share: the one lock, deadlines, threads for blocking work, the
        // system-call helper. Public what the nested packages use (the product above), `package` the rest.
        .target(name: "SpoorSystem", swiftSettings: strictSwift),
        // The durable event log: segments of checksummed records, recovery, the outbox of sealed batches, the
        // rejected area, state files.
        .target(
            name: "SpoorLog",
            dependencies: ["SpoorModel", "SpoorWire", "SpoorSystem", logging],
            swiftSettings: strictSwift
        ),
        // Sending sealed batches: the uploader, its HTTP client, policy and backoff.
        .target(
            name: "SpoorUpload",
            dependencies: ["SpoorModel", "SpoorWire", "SpoorSystem", "SpoorLog", logging],
            swiftSettings: strictSwift
        ),
        // The tracker: the API apps call, the writer, validation, auto-tracking and lifecycle.
        .target(
            name: "SpoorTracker",
            dependencies: ["SpoorModel", "SpoorWire", "SpoorSystem", "SpoorLog", "SpoorUpload", "CSpoorAtomics", logging, metrics],
            // The privacy manifest of everything an app links (docs/privacy-manifest.md).
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: strictSwift
        ),

        // Page and click capture without code: the platform-neutral model, and UIKit/SwiftUI glue.
        .target(
            name: "SpoorAutoCapture", dependencies: ["SpoorModel", "SpoorTracker", "SpoorSystem", logging],
            swiftSettings: strictSwift
        ),
        // The tracker in a ServiceGroup: waits for graceful shutdown, then flushes, uploads and closes within a bound.
        // Empty without the `ServiceLifecycle` trait.
        .target(
            name: "SpoorServiceLifecycle",
            dependencies: ["SpoorTracker", "SpoorSystem", serviceLifecycle],
            swiftSettings: strictSwift
        ),
        // Test doubles (the way swift-log ships InMemoryLogging): nothing in the shipped targets asks which
        // double it was given.
        .target(
            name: "SpoorTesting",
            dependencies: ["SpoorModel", "SpoorSystem", "SpoorLog", "SpoorUpload", "SpoorTracker"],
            swiftSettings: strictSwift
        ),
        // Log and storage inspection and scenario replay, for the `spoor` command. Scenarios run on a clock of
        // their own: a shipped target links no test double.
        .target(
            name: "SpoorTooling",
            dependencies: ["SpoorModel", "SpoorWire", "SpoorSystem", "SpoorLog", "SpoorUpload", "SpoorTracker", logging],
            swiftSettings: strictSwift
        ),
        // Realistic event streams (an iPhone app session, a Linux service), deterministic by seed.
        .target(name: "SpoorWorkload", dependencies: ["SpoorModel"], swiftSettings: strictSwift),

        // A helper process for the log's crash, disk-full and memory tests.
        .executableTarget(
            name: "SpoorCrashChild",
            dependencies: ["SpoorModel", "SpoorWire", "SpoorLog", logging],
            path: "Tests/SpoorCrashChild",
            swiftSettings: strictSwift
        ),

        // What the test targets share: temporary directories, log capture, child processes, the bound of a wait.
        .target(
            name: "SpoorTestSupport",
            dependencies: [
                "SpoorModel", "SpoorWire", "SpoorSystem", "SpoorLog", "SpoorUpload", "SpoorTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/SpoorTestSupport",
            swiftSettings: strictSwift
        ),

        .testTarget(name: "SpoorSystemTests", dependencies: ["SpoorSystem"], swiftSettings: strictSwift),
        .testTarget(
            name: "SpoorWireTests",
            dependencies: ["SpoorModel", "SpoorWire", "SpoorLog", "SpoorWorkload", "SpoorTestSupport"],
            swiftSettings: strictSwift + [systemLibrariesDefine]
        ),
        .testTarget(
            name: "SpoorLogTests",
            dependencies: [
                "SpoorModel", "SpoorWire", "SpoorSystem", "SpoorLog", "SpoorUpload", "SpoorTesting", "SpoorTestSupport",
                "SpoorWorkload",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SpoorUploadTests",
            dependencies: [
                "SpoorModel", "SpoorWire", "SpoorSystem", "SpoorLog", "SpoorUpload", "SpoorTesting", "SpoorTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SpoorTrackerTests",
            dependencies: [
                "SpoorModel", "SpoorWire", "SpoorSystem", "SpoorLog", "SpoorUpload", "SpoorTracker", "SpoorTooling",
                "SpoorTesting", "SpoorTestSupport", "SpoorWorkload",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SpoorAutoCaptureTests",
            dependencies: ["SpoorModel", "SpoorSystem", "SpoorTracker", "SpoorAutoCapture", "SpoorTesting", "SpoorTestSupport"],
            swiftSettings: strictSwift
        ),
    ]
)
