// swift-tools-version: 6.1
// Benchmarks live in their own package, so the library's users never build them.
//
// TrackerBenchmarks is self-contained (no benchmark framework): package-benchmark 1.38.1 on Linux with
// Swift 6.3 needs swift-runtime-interposer, which this project's machines cannot fetch. It reports the
// latency distribution and allocations of `Tracker.track` on the caller's thread, and sustained throughput.
import PackageDescription

let package = Package(
    name: "SpoorBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // The root package; its folder name differs between checkouts, so it is named here.
        .package(name: "Spoor", path: ".."),
    ],
    targets: [
        // Counts allocations per thread by defining malloc & co. in the executable.
        .target(name: "CMallocCounter", path: "Benchmarks/CMallocCounter"),
        .executableTarget(
            name: "TrackerBenchmarks",
            dependencies: ["CMallocCounter", .product(name: "Spoor", package: "Spoor")],
            path: "Benchmarks/TrackerBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            // Export the executable's malloc so shared libraries (the Swift runtime) bind to it.
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic"], .when(platforms: [.linux]))]
        ),
    ]
)
