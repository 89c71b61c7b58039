// swift-tools-version: 6.1
// libFuzzer targets for Spoor's decoders.
//
// This package is separate from the root one because `scripts/fuzz` builds it with the fuzzer flags and
// FuzzCollectorIngest needs the collector's package; fuzz a target with `scripts/fuzz NAME SECONDS`.
// Without the flags (`swift build --package-path Fuzz`, which `make test` runs) each target links a plain
// driver that runs its callback on the files named on its command line (Sources/CFuzzDriver).
//
// To add a target NAME: write Sources/NAME/main.swift (a `fuzzOne` function handed to
// `LLVMFuzzerRunDriver`, as in FuzzEventDecoder), create Corpus/NAME/ and FailCases/NAME/,
// and add NAME to `fuzzTargets` below.
import PackageDescription

/// The fuzz targets; each is an executable under Sources/ with the same name.
let fuzzTargets = [
    "FuzzEventDecoder",
    "FuzzFrameDecoder",
    "FuzzLogRecovery",
    "FuzzWirePaths",
]

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "SpoorFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The root package; its folder name differs between checkouts, so it is named here.
        .package(name: "Spoor", path: ".."),
        // The collector's request core (body → frame → events → rows) and its SQLite store, for FuzzCollectorIngest.
        .package(name: "SpoorCollector", path: "../Collector"),
    ],
    targets: [
        // Declares libFuzzer's `LLVMFuzzerRunDriver`, which each target's main.swift calls.
        .target(name: "CFuzzDriver"),
        // Writes the seed inputs of Corpus/FuzzEventDecoder; an ordinary executable.
        .executableTarget(
            name: "FuzzSeeds",
            dependencies: [.product(name: "Spoor", package: "Spoor")],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "FuzzCollectorIngest",
            dependencies: [
                "CFuzzDriver",
                .product(name: "SpoorCollectorCore", package: "SpoorCollector"),
                .product(name: "SpoorCollectorSQLite", package: "SpoorCollector"),
                .product(name: "SpoorWire", package: "Spoor"),
                .product(name: "SpoorSystem", package: "Spoor"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "FuzzCollectorRequest",
            dependencies: ["CFuzzDriver", .product(name: "SpoorCollectorCore", package: "SpoorCollector")],
            swiftSettings: strictSwift
        ),
    ] + fuzzTargets.map { name in
        .executableTarget(
            name: name,
            dependencies: ["CFuzzDriver", .product(name: "Spoor", package: "Spoor")],
            swiftSettings: strictSwift
        )
    }
)
