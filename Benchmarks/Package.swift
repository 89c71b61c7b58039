// swift-tools-version: 6.1
// Benchmarks of Spoor's transport: event-log appends against a raw write(2) floor, sealing and
// compressing batches per codec, and bytes per event on the wire. Run from this folder:
//
//   swift package benchmark --target TransportBenchmarks
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
    ],
    targets: [
        .executableTarget(
            name: "TransportBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Spoor", package: "Spoor"),
            ],
            path: "Benchmarks/TransportBenchmarks",
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
