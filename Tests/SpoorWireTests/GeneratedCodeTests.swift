import Foundation
import Testing

/// The committed protobuf-c code must be exactly what `protoc-c` makes of proto/ today.
@Suite struct GeneratedCodeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func generatedCodeIsFresh() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("spoor-gen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = Process()
        process.executableURL = Self.root.appendingPathComponent("scripts/generate-proto")
        process.arguments = ["--check", scratch.path]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "scripts/generate-proto failed (is protoc-c installed? run scripts/bootstrap)")
        for file in ["spoor/v1/event.pb-c.c", "spoor/v1/event.pb-c.h"] {
            let fresh = try Data(contentsOf: scratch.appendingPathComponent(file))
            let committed = try Data(contentsOf: Self.root.appendingPathComponent("Sources/CSpoorProtobuf/generated").appendingPathComponent(file))
            #expect(fresh == committed, "\(file) is stale: run scripts/generate-proto and commit the result")
        }
    }
}
