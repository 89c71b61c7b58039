// swift-tools-version: 6.1
// Benchmarks of Spoor's event encoder against swift-protobuf, Foundation's JSONEncoder and a
// pure-C protobuf-c loop, on one reference event, and of the tracker's hot path. Run from this folder:
//
//   swift package benchmark
//
// (or `scripts/bench` from the repository root). See docs/benchmarks.md for the figures.
import PackageDescription

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
        .executableTarget(
            name: "SerializerBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Spoor", package: "Spoor"),
                "SwiftProtobufSchema",
                "CProtobufCFloor",
            ],
            path: "Benchmarks/SerializerBenchmarks",
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // `Tracker.track` on the caller's thread (latency distribution, mallocs) and sustained
        // throughput from two threads into the durable log.
        .executableTarget(
            name: "TrackerBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Spoor", package: "Spoor"),
            ],
            path: "Benchmarks/TrackerBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The same measurements without the framework, plus the writer thread's CPU per event:
        //   swift run -c release --package-path Benchmarks TrackerLoad [--samples N] [--per-thread N] [--rounds N]
        // Counts allocations per thread by defining malloc & co. in the executable.
        .target(name: "CMallocCounter", path: "Benchmarks/CMallocCounter"),
        .executableTarget(
            name: "TrackerLoad",
            dependencies: ["CMallocCounter", .product(name: "Spoor", package: "Spoor")],
            path: "Benchmarks/TrackerLoad",
            swiftSettings: [.swiftLanguageMode(.v6)],
            // Export the executable's malloc so shared libraries (the Swift runtime) bind to it.
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic"], .when(platforms: [.linux]))]
        ),
    ]
)
