import Foundation
import SpoorCollectorTestSupport
import Testing

@Suite("An app that embeds Spoor fetches none of the collector's dependencies", .timeLimit(.minutes(10)))
struct BoundaryTests {
    @Test("a consumer of the Spoor product resolves no NIO, server or database package")
    func consumerResolvesNoServerPackages() async throws {
        let consumer = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-consumer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: consumer) }
        try FileManager.default.createDirectory(at: consumer.appendingPathComponent("Sources/App"), withIntermediateDirectories: true)
        try """
        // swift-tools-version: 6.1
        import PackageDescription
        let package = Package(
            name: "App",
            dependencies: [.package(name: "Spoor", path: "\(BadInputTests.repository.path)")],
            targets: [.target(name: "App", dependencies: [.product(name: "Spoor", package: "Spoor")])]
        )
        """.write(to: consumer.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try "import SpoorTracker\n".write(to: consumer.appendingPathComponent("Sources/App/App.swift"), atomically: true, encoding: .utf8)

        // Run to its end in a process of its own, waited for off the cooperative pool.
        let listed = try await Command.run(
            "/usr/bin/env", ["swift", "package", "--package-path", consumer.path, "show-dependencies", "--format", "flatlist"]
        ).lowercased()
        #expect(listed.contains("swift-log"), "the listing names the root's own dependency: \(listed)")
        for forbidden in ["swift-nio", "hummingbird", "grdb", "postgres", "sqlite", "service-lifecycle", "prometheus"] {
            #expect(!listed.contains(forbidden), "\(forbidden) in \(listed)")
        }
        let checkouts = consumer.appendingPathComponent(".build/checkouts")
        let fetched = ((try? FileManager.default.contentsOfDirectory(atPath: checkouts.path)) ?? []).map { $0.lowercased() }
        #expect(fetched.contains("swift-log"), "fetched: \(fetched)")
        for forbidden in ["swift-nio", "hummingbird", "grdb", "postgres", "sqlite"] {
            #expect(!fetched.contains { $0.contains(forbidden) }, "\(forbidden) fetched: \(fetched)")
        }
    }
}
