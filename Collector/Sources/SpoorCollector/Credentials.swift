import ArgumentParser
import Crypto
import Foundation
import SpoorCollectorCore

/// The collector's bearer tokens: ingest tokens (`--token`, `--token-file`, `SPOOR_TOKEN`), which may only send
/// batches, and admin tokens (`--admin-token`, `--admin-token-file`, `SPOOR_ADMIN_TOKEN`), which may also read
/// (`/v1/events/recent`, `/metrics`).
///
/// Only SHA-256 digests are kept. A presented token is hashed once and compared with every digest, each compared
/// whole, so the time taken says nothing about which token, or how much of one, matched.
struct Credentials: Sendable {
    private let ingest: [[UInt8]]
    private let admin: [[UInt8]]

    /// The shortest token accepted: 16 characters of letters and digits are about 95 bits.
    static let minimumLength = 16

    /// The policy these tokens give the routes.
    var policy: AccessPolicy { AccessPolicy(ingestTokens: !ingest.isEmpty, adminTokens: !admin.isEmpty) }

    /// Checks and keeps `ingest` and `admin` tokens: each at least ``minimumLength`` characters of the token68 set
    /// (letters, digits, `-._~+/`, then `=` padding) that an `Authorization: Bearer` header carries, and no token
    /// both. The message of an error never shows a token.
    init(ingest: [String], admin: [String]) throws(ValidationError) {
        for (tokens, option) in [(ingest, "--token"), (admin, "--admin-token")] {
            for (index, token) in tokens.enumerated() {
                guard token.count >= Self.minimumLength else {
                    throw ValidationError("\(option) number \(index + 1) is shorter than \(Self.minimumLength) characters; use a long random one (openssl rand -hex 32)")
                }
                guard RequestHeaders.bearerToken("Bearer " + token) == token else {
                    throw ValidationError("\(option) number \(index + 1) holds characters a bearer token may not: use letters, digits and -._~+/")
                }
            }
        }
        guard Set(ingest).isDisjoint(with: admin) else {
            throw ValidationError("a token is both an ingest token and an admin token; an app's token must not read")
        }
        self.ingest = ingest.map(Self.digest)
        self.admin = admin.map(Self.digest)
    }

    /// Who sent `token` (nil: no usable `Authorization: Bearer`).
    func caller(token: String?) -> Caller {
        guard let token else { return .anonymous }
        let presented = Self.digest(token)
        // Every digest is compared whole, matched or not.
        var isAdmin = false
        var isIngest = false
        for digest in admin { isAdmin = Self.equal(digest, presented) || isAdmin }
        for digest in ingest { isIngest = Self.equal(digest, presented) || isIngest }
        return isAdmin ? .admin : isIngest ? .ingest : .anonymous
    }

    private static func digest(_ token: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(token.utf8)))
    }

    /// Equal 32-byte digests, in time that does not depend on where they differ.
    private static func equal(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        var difference: UInt8 = 0
        for index in 0..<min(left.count, right.count) { difference |= left[index] ^ right[index] }
        return difference == 0 && left.count == right.count
    }

    /// Tokens from `values` (command line), the lines of each file of `files` (blank lines and lines starting with
    /// `#` skipped) and the environment variable `variable` (several separated by commas or white space).
    static func load(_ values: [String], files: [String], variable: String, option: String) throws(ValidationError) -> [String] {
        var tokens = values
        for path in files {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ValidationError("\(option)-file \(path) cannot be read")
            }
            for line in text.split(whereSeparator: \.isNewline) {
                let token = line.trimmingCharacters(in: .whitespaces)
                if !token.isEmpty, !token.hasPrefix("#") { tokens.append(token) }
            }
        }
        if let value = ProcessInfo.processInfo.environment[variable] {
            tokens += value.split { $0 == "," || $0.isWhitespace }.map(String.init)
        }
        return tokens
    }
}

/// Whether `host` (from `--listen`) is a loopback address, reachable only from this machine.
func isLoopback(host: String) -> Bool {
    let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    if bare == "localhost" || bare == "::1" { return true }
    let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
}

/// `text` with the password of any `scheme://user:password@` in it, or the whole user part of a NATS URL (where it
/// may be a token), replaced by `***`: for every message that repeats what an operator passed.
func redactingSecrets(_ text: String) -> String {
    var result = ""
    var rest = Substring(text)
    while let schemeEnd = rest.range(of: "://") {
        result += rest[..<schemeEnd.upperBound]
        let scheme = rest[..<schemeEnd.lowerBound].reversed().prefix { $0.isLetter || $0 == "+" }
        rest = rest[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == " " || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { continue }
        let userInfo = authority[..<at]
        let isNATS = String(scheme.reversed()).lowercased().hasPrefix("nats") || String(scheme.reversed()).lowercased() == "tls"
        if let colon = userInfo.firstIndex(of: ":"), !isNATS {
            result += userInfo[...colon] + "***"
        } else {
            result += "***"
        }
        rest = rest[at...]
    }
    return result + rest
}
