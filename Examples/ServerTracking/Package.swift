// swift-tools-version: 6.1
// A Hummingbird service that tracks one event per request for the request's user, with the tracker running as a
// Service in the server's ServiceGroup: flushed and uploaded on SIGTERM (README.md). A nested package, so that an app
// embedding Spoor never fetches Hummingbird. The Collector package builds it too, for its test (ServerTrackingTests),
// so `make test` builds Hummingbird once.
//
//   SPOOR_COLLECTOR=http://127.0.0.1:8090 swift run server-tracking
//   swift run -c release server-tracking-bench      (docs/benchmarks.md)
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "ServerTracking",
    platforms: [.macOS(.v15)],
    products: [
        // The server.
        .executable(name: "server-tracking", targets: ["ServerTracking"]),
        // What one request's tracking costs the request: the middleware timed against a pass-through one.
        .executable(name: "server-tracking-bench", targets: ["ServerTrackingBench"]),
    ],
    dependencies: [
        // The root package (its folder name differs between checkouts, so it is named here), with the trait that
        // brings TrackerService.
        .package(name: "Spoor", path: "../..", traits: [.defaults, "ServiceLifecycle"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The middleware: one event per request, under the request's user.
        .target(
            name: "RequestTracking",
            dependencies: [
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "ServerTracking",
            dependencies: [
                "RequestTracking",
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "SpoorServiceLifecycle", package: "Spoor"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "ServerTrackingBench",
            dependencies: [
                "RequestTracking",
                .product(name: "Spoor", package: "Spoor"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
    ]
)
