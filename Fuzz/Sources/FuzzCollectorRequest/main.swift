// Fuzzes what the collector reads of a request before its body: the query string of `GET /v1/events/recent` and
// the header fields `Authorization`, `Content-Type` and `Content-Length` (SpoorCollectorCore's `QueryString`,
// `LiveQuery` and `RequestHeaders`). The first byte picks the parser, the rest is the text. Nothing may crash,
// every bound must hold, and what is accepted must read back the same when written out again.
// `Collector/Tests/SpoorCollectorTests/RequestCorpusReplayTests.swift` replays the corpus with the same checks.
import CFuzzDriver
import Foundation
import SpoorCollectorCore

/// The live feed the queries read (empty: positions start at 1, so any `after` is past its latest).
let feed = LiveFeed(capacity: 10)

/// `text` percent-encoded: every byte but letters, digits and `-._~`.
func percentEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            out.unicodeScalars.append(UnicodeScalar(byte))
        default:
            out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
        }
    }
    return out
}

/// The failure of the checks on one input, or nil.
func failure(_ input: [UInt8]) -> String? {
    guard let selector = input.first else { return nil }
    let text = String(decoding: input.dropFirst(), as: UTF8.self)
    switch selector % 4 {
    case 0:
        switch QueryString.parameters(Substring(text)) {
        case .success(let parameters):
            guard text.utf8.count <= QueryString.maxBytes, parameters.count <= QueryString.maxParameters else {
                return "a query past its bounds was accepted"
            }
            // Written out again (when that still fits), it reads back the same.
            let again = parameters.map { percentEncoded($0.name) + "=" + percentEncoded($0.value) }.joined(separator: "&")
            if again.utf8.count <= QueryString.maxBytes {
                guard case .success(let reread) = QueryString.parameters(Substring(again)),
                      reread.map(\.name) == parameters.map(\.name), reread.map(\.value) == parameters.map(\.value) else {
                    return "a query does not read back the same: \(parameters)"
                }
            }
        case .failure(let error):
            guard error.description.utf8.count <= 256 else { return "a query error is unbounded" }
        }
        switch LiveQuery.parse(query: Substring(text)) {
        case .success(let query):
            guard (1...LiveQuery.maxLimit).contains(query.limit) else { return "limit \(query.limit) out of range" }
            // What the query is for: a read of the feed, whatever the position.
            let read = feed.read(after: query.after, limit: query.limit, now: 0)
            guard read.events.count <= query.limit, read.skipped >= 0 else { return "a read past its limit" }
        case .failure(let answer):
            guard answer.status == 400, answer.body.hasPrefix(#"{"error":"bad_query","#), answer.body.utf8.count <= 1024 else {
                return "a bad query got \(answer.status) \(answer.body.prefix(200))"
            }
        }
    case 1:
        if let token = RequestHeaders.bearerToken(text) {
            guard !token.isEmpty, token.utf8.count <= RequestHeaders.maxTokenBytes, !token.contains(" "),
                  RequestHeaders.bearerToken("Bearer " + token) == token else {
                return "a bearer token does not read back: \(token)"
            }
        }
    case 2:
        if RequestHeaders.isBatchMediaType(text) {
            guard text.lowercased().contains("application/x-spoor-batch") else { return "\(text) taken as a batch" }
        }
    default:
        if case .bytes(let count) = RequestHeaders.contentLength(text) {
            guard count >= 0, text.allSatisfy(\.isASCII), Int(text) == count else { return "Content-Length \(text) read as \(count)" }
        }
    }
    return nil
}

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    if let failure = failure(input) { fatalError(failure) }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
