// swift-tools-version: 6.1
// `make demo`'s tracker step: code events, identity and super properties go into the durable log through
// the public API, and come back out decoded. Separate from the root package so apps never build it.
import PackageDescription

let package = Package(
    name: "TrackerDemo",
    platforms: [.macOS(.v13)],
    dependencies: [
        // The root package; its folder name differs between checkouts, so it is named here.
        .package(name: "Spoor", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "TrackerDemo",
            dependencies: [
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "SpoorTesting", package: "Spoor"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
