// swift-tools-version: 6.1
// `spoor`: the command-line tool (docs/command-line.md). A nested package so that an app embedding the `Spoor`
// product never fetches swift-argument-parser.
//
//   swift run --package-path Tools spoor --help
//   swift test --package-path Tools
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "SpoorTools",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "spoor", targets: ["SpoorCLI"]),
    ],
    dependencies: [
        // The root package; its folder name differs between checkouts, so it is named here.
        .package(name: "Spoor", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "SpoorCLI",
            dependencies: [
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "SpoorTooling", package: "Spoor"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // A small program with a real lifecycle (signals, exit, crash) for the process tests; not shipped.
        .executableTarget(
            name: "SpoorLifecycleChild",
            dependencies: [.product(name: "Spoor", package: "Spoor")],
            path: "Tests/SpoorLifecycleChild",
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SpoorCLITests",
            dependencies: [
                .product(name: "Spoor", package: "Spoor"), .product(name: "SpoorTooling", package: "Spoor"),
                .product(name: "SpoorTesting", package: "Spoor"),  // ConditionWatchers
                .product(name: "SpoorSystem", package: "Spoor"),  // Locked
            ],
            swiftSettings: strictSwift
        ),
    ]
)
