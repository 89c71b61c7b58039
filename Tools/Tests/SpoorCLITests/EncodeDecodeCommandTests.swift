import Foundation
import SpoorWire
import Testing

@Suite("spoor encode and decode")
struct EncodeDecodeCommandTests {
    /// Lines in the exact shape `spoor decode` prints, covering every value type and optional member.
    static let lines = [
        #"{"event":"BuyProduct","type":"track","time":1767225600123,"track_id":"deadbeef01234567","sequence":42,"distinct_id":"user-1","anonymous_id":"anon-1","login_id":"user-1","session_id":"s-1","lib":{"$lib":"Linux","$lib_version":"0.1.0","$lib_method":"code","$app_version":"1.2.3"},"properties":{"at":"2026-01-01T00:00:00.123Z","big":9223372036854775807,"flag":true,"neg":-0.0,"price":12.5,"tags":["a","中文","😀"],"text":"é \"quoted\" \\ \n tab\t","tiny":5e-324}}"#,
        #"{"event":"$SignUp","type":"track_signup","time":0,"track_id":"0000000000000001","sequence":1,"distinct_id":"u","anonymous_id":"a","original_id":"a","lib":{"$lib":"iOS","$lib_version":"0.1.0","$lib_method":"code","$app_version":""},"properties":{}}"#,
        #"{"event":"","type":"profile_set","time":-1,"track_id":"ffffffffffffffff","sequence":2,"distinct_id":"u","anonymous_id":"a","lib":{"$lib":"Linux","$lib_version":"0.1.0","$lib_method":"autoTrack","$app_version":""},"properties":{"ancient":{"$date":-999999999999999},"empty":[],"min":-9223372036854775808}}"#,
    ]

    @Test func encodeThenDecodeReproducesTheInput() async throws {
        let input = Self.lines.joined(separator: "\n") + "\n"
        let encoded = try await SpoorProcess.run(["encode"], input: Data(input.utf8))
        #expect(encoded.status == 0, "\(encoded.stderr)")
        #expect(!encoded.stdout.isEmpty)
        let decoded = try await SpoorProcess.run(["decode"], input: encoded.stdout)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdoutText == input)
    }

    @Test func blankLinesAreSkipped() async throws {
        let input = "\n" + Self.lines[1] + "\n\n   \n"
        let encoded = try await SpoorProcess.run(["encode"], input: Data(input.utf8))
        #expect(encoded.status == 0)
        let decoded = try await SpoorProcess.run(["decode"], input: encoded.stdout)
        #expect(decoded.stdoutText == Self.lines[1] + "\n")
    }

    @Test("a bad line is named and nothing is written", arguments: [
        ("{not json", "line 2: invalid JSON"),
        (#"{"event":"x","type":"track","time":1.5,"distinct_id":"u","anonymous_id":"a","lib":{"$lib":"L","$lib_version":"1","$lib_method":"code"}}"#, "line 2: time: expected integer"),
        (#"{"event":"x","type":"nope","time":1,"distinct_id":"u","anonymous_id":"a","lib":{"$lib":"L","$lib_version":"1","$lib_method":"code"}}"#, "line 2: type: unknown type"),
        (#"{"event":"x","type":"track","time":1,"distinct_id":"u","anonymous_id":"a","lib":{"$lib":"L","$lib_version":"1","$lib_method":"code"},"properties":{"k":null}}"#, "line 2: properties.k: null"),
        (#"{"event":"x","type":"track","time":1,"distinct_id":"u","anonymous_id":"a","lib":{"$lib":"L","$lib_version":"1","$lib_method":"code"},"properties":{"k":"a\u0000b"}}"#, "line 2: properties.value.string_value: contains U+0000"),
        (#"{"event":"x","type":"track","time":1,"anonymous_id":"a","lib":{"$lib":"L","$lib_version":"1","$lib_method":"code"}}"#, "line 2: distinct_id: missing"),
    ])
    func badLine(line: String, message: String) async throws {
        let input = Self.lines[0] + "\n" + line + "\n" + Self.lines[1] + "\n"
        let result = try await SpoorProcess.run(["encode"], input: Data(input.utf8))
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("spoor encode: " + message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func decodeReportsMalformedInputAfterTheGoodEvents() async throws {
        let encoded = try await SpoorProcess.run(["encode"], input: Data((Self.lines[1] + "\n").utf8))
        var bytes = encoded.stdout
        bytes.append(contentsOf: [0x0A, 0x05, 0x10, 0x01])
        let result = try await SpoorProcess.run(["decode"], input: bytes)
        #expect(result.status == 2)
        #expect(result.stdoutText == Self.lines[1] + "\n")
        #expect(result.stderr.contains("length 5 reaches past the end"), "\(result.stderr)")
    }

    /// The wire is plain protobuf: the stock `protoc --decode` reads what `spoor encode` writes.
    @Test func stockProtocDecodesTheBatch() async throws {
        let encoded = try await SpoorProcess.run(["encode"], input: Data((Self.lines.joined(separator: "\n") + "\n").utf8))
        #expect(encoded.status == 0)
        let protoc = try await SpoorProcess.run(
            ["--proto_path=\(SpoorProcess.root.appendingPathComponent("proto").path)", "--decode=spoor.v1.Batch", "spoor/v1/event.proto"],
            input: encoded.stdout, tool: URL(fileURLWithPath: "/usr/bin/protoc"))
        #expect(protoc.status == 0, "\(protoc.stderr)")
        let text = protoc.stdoutText
        for expected in [
            #"event: "BuyProduct""#, "type: EVENT_TYPE_TRACK", "time: 1767225600123", "track_id: 16045690981116495207",
            "sequence: 42", #"login_id: "user-1""#, #"session_id: "s-1""#, "method: LIB_METHOD_CODE",
            "date_value: 1767225600123", "int_value: 9223372036854775807", "bool_value: true", "double_value: 12.5",
            "double_value: -0", #"values: "\344\270\255\346\226\207""#, "type: EVENT_TYPE_TRACK_SIGNUP", #"original_id: "a""#,
            "type: EVENT_TYPE_PROFILE_SET", "method: LIB_METHOD_AUTO_TRACK", "int_value: -9223372036854775808",
            "date_value: -999999999999999", "list_value {\n",
        ] {
            #expect(text.contains(expected), "protoc output lacks \(expected)")
        }
        #expect(text.components(separatedBy: "events {").count - 1 == 3)
    }

    @Test func unknownCommandIsAUsageError() async throws {
        let result = try await SpoorProcess.run(["frobnicate"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown command 'frobnicate'"))
    }
}

@Suite("spoor decode of batch frames")
struct DecodeFrameCommandTests {
    /// Each committed frame vector decodes to the same events, whatever its codec.
    @Test func frameVectorsDecodeToTheSameEvents() async throws {
        var outputs: [String] = []
        for name in ["none", "gzip", "zstd"] {
            let frame = try Data(contentsOf: SpoorProcess.root.appendingPathComponent("docs/vectors/\(name).spb"))
            let result = try await SpoorProcess.run(["decode"], input: frame)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(result.stdoutText.split(separator: "\n").count == 3, "\(name)")
            outputs.append(result.stdoutText)
        }
        #expect(Set(outputs).count == 1)
    }

    @Test func corruptFrameIsAnError() async throws {
        var frame = try Data(contentsOf: SpoorProcess.root.appendingPathComponent("docs/vectors/zstd.spb"))
        frame[frame.count - 5] ^= 0xFF
        let result = try await SpoorProcess.run(["decode"], input: frame)
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("spoor decode: frame:"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
