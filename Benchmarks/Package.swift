// swift-tools-version: 6.1
// Spoor's benchmarks. Run from this folder:
//
//   swift package benchmark                                   # all
//   swift package benchmark --target SerializerBenchmarks     # the encoder against swift-protobuf, JSONEncoder, pure C
//   swift package benchmark --target TransportBenchmarks      # log appends against write(2), sealing per codec
//   swift package benchmark --target TrackerBenchmarks        # Tracker.track on the caller, 2 threads into the log
//
// The benchmark plugin runs every executable under Benchmarks/ as a benchmark suite, so the load programs,
// which take their own arguments, live under Load/ instead.
//
// TrackerLoad measures the tracker without the framework (per-call latency, mallocs per call, the writer
// thread's CPU per event, sustained throughput):
//
//   swift run -c release TrackerLoad [--samples N] [--per-thread N] [--rounds N]
//
// (or `scripts/bench` from the repository root). See docs/benchmarks.md for the figures.
//
// PipelineLoad sends 1,000,000 events through the whole pipeline to a real collector process
// (`scripts/pipeline-bench`, which builds the collector too).
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// A benchmark executable under Benchmarks/NAME, run by the benchmark plugin.
func benchmark(_ name: String, dependencies: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: [
            .product(name: "Benchmark", package: "benchmark"),
            .product(name: "Spoor", package: "Spoor"),
        ] + dependencies,
        path: "Benchmarks/\(name)",
        swiftSettings: strictSwift,
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "SpoorBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // The root package; its folder name differs between checkouts, so it is named here.
        .package(name: "Spoor", path: ".."),
        // The interposer trait gives malloc counts; the default traits also pull in a
        // runtime interposer that cannot be resolved here.
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
    ],
    targets: [
        // swift-protobuf's generated code for proto/spoor/v1/event.proto (see its README.md).
        .target(
            name: "SwiftProtobufSchema",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
            exclude: ["README.md"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The floor: the reference event built from protobuf-c structs and packed in C. It uses
        // the root's generated code (through the `generated` link), linked in by the Spoor product.
        .target(
            name: "CProtobufCFloor",
            dependencies: [.product(name: "Spoor", package: "Spoor")],
            exclude: ["generated/spoor/v1/event.pb-c.c"],
            cSettings: [.headerSearchPath("generated")]
        ),
        benchmark("SerializerBenchmarks", dependencies: ["SwiftProtobufSchema", "CProtobufCFloor"]),
        benchmark("TransportBenchmarks"),
        benchmark("TrackerBenchmarks"),
        // Counts allocations per thread by defining malloc & co. in the executable.
        .target(name: "CMallocCounter", path: "Load/CMallocCounter"),
        .executableTarget(
            name: "TrackerLoad",
            dependencies: [
                "CMallocCounter", .product(name: "Spoor", package: "Spoor"), .product(name: "SpoorWorkload", package: "Spoor"),
            ],
            path: "Load/TrackerLoad",
            swiftSettings: strictSwift,
            // Export the executable's malloc so shared libraries (the Swift runtime) bind to it.
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic"], .when(platforms: [.linux]))]
        ),
        // The whole pipeline: track → log → frames → upload → a real collector process → SQLite.
        .executableTarget(
            name: "PipelineLoad",
            dependencies: [.product(name: "Spoor", package: "Spoor"), .product(name: "SpoorWorkload", package: "Spoor")],
            path: "Load/PipelineLoad",
            swiftSettings: strictSwift
        ),
        // Several processes tracking into one storage directory against one process alone.
        .executableTarget(
            name: "SharedDirectoryLoad",
            dependencies: [.product(name: "Spoor", package: "Spoor"), .product(name: "SpoorWorkload", package: "Spoor")],
            path: "Load/SharedDirectoryLoad",
            swiftSettings: strictSwift
        ),
    ]
)
