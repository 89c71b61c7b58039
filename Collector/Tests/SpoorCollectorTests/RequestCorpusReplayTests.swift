import Foundation
import SpoorCollectorCore
import Testing

@Suite("The FuzzCollectorRequest corpus and failure cases, replayed through the query and header parsers")
struct RequestCorpusReplayTests {
    /// Every input of `Fuzz/Corpus/FuzzCollectorRequest` and `Fuzz/FailCases/FuzzCollectorRequest`.
    static func inputs() throws -> [(name: String, bytes: [UInt8])] {
        var inputs: [(String, [UInt8])] = []
        for folder in ["Fuzz/Corpus/FuzzCollectorRequest", "Fuzz/FailCases/FuzzCollectorRequest"] {
            let directory = BadInputTests.repository.appendingPathComponent(folder)
            for file in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where file != "README.md" {
                inputs.append(("\(folder)/\(file)", [UInt8](try Data(contentsOf: directory.appendingPathComponent(file)))))
            }
        }
        return inputs
    }

    @Test("each input: the fuzz target's checks hold (bounds, read-back, a feed read at any position)")
    func replay() throws {
        let inputs = try Self.inputs()
        #expect(inputs.count >= 20)
        let feed = LiveFeed(capacity: 10)
        for (name, input) in inputs {
            guard let selector = input.first else { continue }
            let text = String(decoding: input.dropFirst(), as: UTF8.self)
            switch selector % 4 {
            case 0:
                if case .success(let parameters) = QueryString.parameters(Substring(text)) {
                    #expect(text.utf8.count <= QueryString.maxBytes && parameters.count <= QueryString.maxParameters, "\(name)")
                }
                switch LiveQuery.parse(query: Substring(text)) {
                case .success(let query):
                    #expect((1...LiveQuery.maxLimit).contains(query.limit), "\(name)")
                    let read = feed.read(after: query.after, limit: query.limit, now: 0)
                    #expect(read.events.count <= query.limit && read.skipped >= 0, "\(name)")
                case .failure(let answer):
                    #expect(answer.status == 400 && answer.body.hasPrefix(#"{"error":"bad_query","#), "\(name)")
                    #expect(answer.body.utf8.count <= 1024, "\(name)")
                }
            case 1:
                if let token = RequestHeaders.bearerToken(text) {
                    #expect(token.utf8.count <= RequestHeaders.maxTokenBytes && !token.contains(" "), "\(name)")
                    #expect(RequestHeaders.bearerToken("Bearer " + token) == token, "\(name)")
                }
            case 2:
                if RequestHeaders.isBatchMediaType(text) { #expect(text.lowercased().contains("application/x-spoor-batch"), "\(name)") }
            default:
                if case .bytes(let count) = RequestHeaders.contentLength(text) { #expect(Int(text) == count, "\(name)") }
            }
        }
    }

    @Test("the parsers' answers for the named seeds")
    func seeds() {
        func query(_ text: String) -> LiveQuery? {
            if case .success(let query) = LiveQuery.parse(query: Substring(text)) { return query }
            return nil
        }
        #expect(query("after=18446744073709551615") == LiveQuery(after: .max))
        #expect(query("after=18446744073709551616") == nil)
        #expect(query("%61fter=1&limit=%31%30") == LiveQuery(after: 1, limit: 10))
        #expect(query("&&after=1&") == LiveQuery(after: 1))
        #expect(query("after=+1") == nil && query("after=-1") == nil && query("after=%FF") == nil && query("after=%zz") == nil)
        #expect(query("after=" + String(repeating: "0", count: 1100)) == nil)
        #expect(RequestHeaders.bearerToken("Bearer abc==") == "abc==")
        #expect(RequestHeaders.bearerToken("BEARER   abc") == "abc")
        #expect(RequestHeaders.bearerToken("Bearer ab=c") == nil && RequestHeaders.bearerToken("Bearer") == nil)
        #expect(RequestHeaders.bearerToken("Basic abc") == nil && RequestHeaders.bearerToken("Bearer t\u{E9}st") == nil)
        #expect(RequestHeaders.isBatchMediaType(" Application/X-Spoor-Batch ; version=1"))
        #expect(!RequestHeaders.isBatchMediaType("application/x-spoor-batchx") && !RequestHeaders.isBatchMediaType(nil))
        #expect(RequestHeaders.contentLength("4000000") == .bytes(4_000_000))
        #expect(RequestHeaders.contentLength("+12") == .invalid && RequestHeaders.contentLength("99999999999999999999") == .invalid)
        #expect(RequestHeaders.contentLength(nil) == .absent)
    }
}
