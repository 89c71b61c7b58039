// swift-tools-version: 6.1
// What an app on an Apple platform builds, built on Linux: Spoor with `traits: ["Tracker"]`, so without the
// `SystemLibraries` trait (protobuf-c, libzstd) that Apple's SDKs lack. `scripts/apple-configuration` (run by
// `make test`) checks that the binary links neither library, and that the gzip frames it seals reach a collector
// and decode there (with protobuf-c) to the events this build's Swift decoder reads from them.
import PackageDescription

let package = Package(
    name: "AppleConfiguration",
    platforms: [.macOS(.v13)],
    dependencies: [
        // The root package; its folder name differs between checkouts, so it is named here.
        .package(name: "Spoor", path: "../..", traits: ["Tracker"]),
    ],
    targets: [
        .executableTarget(
            name: "AppleConfiguration",
            dependencies: [
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "SpoorWorkload", package: "Spoor"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
