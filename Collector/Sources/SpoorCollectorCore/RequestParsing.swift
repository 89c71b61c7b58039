/// Why a query string was refused; the text names what was wrong and quotes at most a bounded part of it.
public struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// A request's query string (what follows `?`), parsed with bounds: at most ``maxBytes`` bytes and
/// ``maxParameters`` parameters, names and values percent-decoded (`+` is a space) and valid UTF-8.
///
/// The collector parses queries itself rather than through the HTTP framework, so the same bounded code is what the
/// fuzz target `FuzzCollectorRequest` runs.
public enum QueryString {
    /// The longest query accepted: two numbers need far less.
    public static let maxBytes = 1024
    /// The most parameters accepted.
    public static let maxParameters = 8

    /// The parameters in order (empty segments, as in `a=1&&b=2`, skipped), or why the query is refused. A segment
    /// without `=` is a name with an empty value.
    public static func parameters(_ query: Substring) -> Result<[(name: String, value: String)], QueryError> {
        let bytes = Array(query.utf8)
        guard bytes.count <= maxBytes else { return .failure(QueryError("the query is longer than \(maxBytes) bytes")) }
        var parameters: [(name: String, value: String)] = []
        for segment in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            guard parameters.count < maxParameters else {
                return .failure(QueryError("the query has more than \(maxParameters) parameters"))
            }
            let equals = segment.firstIndex(of: UInt8(ascii: "="))
            let rawName = segment[..<(equals ?? segment.endIndex)]
            let rawValue = equals.map { segment[segment.index(after: $0)...] } ?? []
            guard let name = decode(rawName), let value = decode(rawValue) else {
                return .failure(QueryError("the query is not percent-encoded UTF-8"))
            }
            parameters.append((name, value))
        }
        return .success(parameters)
    }

    /// Percent-decodes `bytes` (`+` is a space); nil for a `%` not followed by two hex digits or bytes that are not
    /// UTF-8.
    static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "%"):
                guard bytes.endIndex - index >= 3, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else {
                    return nil
                }
                out.append(high << 4 | low)
                index += 3
            case UInt8(ascii: "+"):
                out.append(UInt8(ascii: " "))
                index += 1
            default:
                out.append(byte)
                index += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The request header fields the collector reads, parsed strictly and with bounds.
public enum RequestHeaders {
    /// The longest bearer token read; a longer `Authorization` is refused like a wrong token.
    public static let maxTokenBytes = 512

    /// The token of `Authorization: Bearer TOKEN` (the scheme in any case, then spaces, then a token68: letters,
    /// digits and `-._~+/`, then any `=`), or nil when the field is missing or not of that form.
    public static func bearerToken(_ field: String?) -> String? {
        guard let field else { return nil }
        let bytes = Array(field.utf8.prefix(maxTokenBytes + 64 + 1))
        guard bytes.count <= maxTokenBytes + 64 else { return nil }
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count + 1, zip(bytes, scheme).allSatisfy({ ($0 | 0x20) == $1 }),
              bytes[scheme.count] == UInt8(ascii: " ") else { return nil }
        let token = bytes[(scheme.count + 1)...].drop { $0 == UInt8(ascii: " ") }
        guard let first = token.first, first != UInt8(ascii: "="), token.count <= maxTokenBytes else { return nil }
        var seenPadding = false
        for byte in token {
            if byte == UInt8(ascii: "=") {
                seenPadding = true
            } else if seenPadding || !isToken68(byte) {
                return nil
            }
        }
        return String(decoding: token, as: UTF8.self)
    }

    private static func isToken68(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    /// Whether a `Content-Type` field is `application/x-spoor-batch` (in any case, with or without parameters).
    public static func isBatchMediaType(_ field: String?) -> Bool {
        guard let field, field.utf8.count <= 256 else { return false }
        let type = field.utf8.prefix { $0 != UInt8(ascii: ";") }
        let trimmed = type.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        let expected = "application/x-spoor-batch".utf8
        return trimmed.count == expected.count && zip(trimmed, expected).allSatisfy { ($0 | 0x20) == $1 }
    }

    /// What a `Content-Length` field says.
    public enum ContentLength: Sendable, Hashable {
        /// No field: the body's length is known only once it has been read (chunked).
        case absent
        /// The declared length.
        case bytes(Int)
        /// Not a decimal number of at most 18 digits.
        case invalid
    }

    /// Parses a `Content-Length` field: digits only, at most 18 of them, so the value always fits an `Int`.
    public static func contentLength(_ field: String?) -> ContentLength {
        guard let field else { return .absent }
        guard !field.isEmpty, field.utf8.count <= 18, field.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = Int(field) else { return .invalid }
        return .bytes(value)
    }
}
