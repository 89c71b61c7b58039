import Foundation
import Testing
import SpoorTestSupport

/// The committed protobuf-c code must be exactly what `protoc-c` makes of proto/ today.
@Suite struct GeneratedCodeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func generatedCodeIsFresh() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-gen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let result = try await ChildProcess.run(Self.root.appendingPathComponent("scripts/generate-proto"), ["--check", scratch.path])
        try #require(
            result.termination == .exited(0),
            "scripts/generate-proto failed (is protoc-c installed? run scripts/bootstrap): \(result.errors)")
        for file in ["spoor/v1/event.pb-c.c", "spoor/v1/event.pb-c.h"] {
            let fresh = try Data(contentsOf: scratch.appendingPathComponent(file))
            let committed = try Data(contentsOf: Self.root.appendingPathComponent("Sources/CSpoorProtobuf/generated").appendingPathComponent(file))
            #expect(fresh == committed, "\(file) is stale: run scripts/generate-proto and commit the result")
        }
    }
}
