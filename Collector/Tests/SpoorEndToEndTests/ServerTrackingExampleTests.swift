import Foundation
import GRDB
import SpoorCollectorTestSupport
import SpoorLoopback
import SpoorSystem
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The example server (Examples/ServerTracking) as a process of its own, tracking for many users into a real
/// collector process, and stopped the way a deploy stops it: SIGTERM.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ServerTrackingExampleTests {
    static let users = 50
    static let requestsPerUser = 40

    /// The distinct id the example tracks user `index`'s requests under: user 0 sends no `X-User-ID`.
    static func distinctID(_ index: Int) -> String { index == 0 ? "anonymous" : "user-\(index)" }

    @Test func twoThousandRequestsFromFiftyUsersAreAllStoredAfterSIGTERM() async throws {
        let collector = try await CollectorProcess()
        let storage = StorageDirectory()
        let environment = ProcessInfo.processInfo.environment.merging([
            "PORT": "0", "SPOOR_STORAGE": storage.url.path, "SPOOR_COLLECTOR": "http://127.0.0.1:\(collector.port)",
            // A bound for a hang on a loaded machine, not a speed.
            "SPOOR_UPLOAD_TIMEOUT": "\(Int(waitBound.timeInterval))",
        ]) { $1 }
        let (server, port) = try await CollectorLaunch.start(
            CollectorProcess.builtProduct("server-tracking", override: "SPOOR_SERVER_TRACKING_BIN"), [],
            environment: environment)

        // Every user at once, each on a connection (and a thread) of its own, one request after another.
        let statuses = await onThreadsOfTheirOwn(Self.users) { user -> Result<[Int], LoopbackError> in
            Result { () throws(LoopbackError) in
                let connection = try HTTPConnection(connectingTo: port)
                defer { connection.close() }
                let header = user == 0 ? "" : "X-User-ID: \(Self.distinctID(user))\r\n"
                let request = Array("GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\(header)\r\n".utf8)
                var statuses: [Int] = []
                for _ in 0..<Self.requestsPerUser {
                    guard connection.write(request) else { throw LoopbackError("user \(user): the server closed the connection") }
                    do {
                        statuses.append(try connection.readResponse().status)
                    } catch {
                        throw LoopbackError("user \(user): \(error)")
                    }
                }
                return statuses
            }
        }
        for (user, result) in statuses.enumerated() {
            #expect(try result.get() == Array(repeating: 200, count: Self.requestsPerUser), "user \(user)")
        }

        // A hostile user id (over the 255 bytes an id may have): the request is served, the event rejected, nothing stored.
        let hostile = try await onThreadOfItsOwn { () throws(LoopbackError) -> Int in
            let connection = try HTTPConnection(connectingTo: port)
            defer { connection.close() }
            connection.write(Array("GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nX-User-ID: \(String(repeating: "x", count: 300))\r\n\r\n".utf8))
            do { return try connection.readResponse().status } catch { throw LoopbackError("the hostile request: \(error)") }
        }
        #expect(hostile == 200)

        // A deploy: SIGTERM, then the process ends by itself once the tracker has uploaded.
        #expect(try await server.stop(signal: SIGTERM) == 0, "\(server.errors.suffix(10))")
        // Its own account: nothing pending when it stopped (the final flush counts only what it delivered itself).
        let report = try #require(server.output.first { $0.hasPrefix("tracker shut down:") }, "\(server.output.suffix(5))")
        #expect(report.hasPrefix("tracker shut down: graceful: delivered ") && report.hasSuffix("; log closed"), "\(report)")
        #expect(!report.contains("pending"), "\(report)")

        // The collector holds every request's event, once, under its user.
        let counts = try await DatabaseQueue(path: collector.databasePath).read { db in
            try Row.fetchAll(db, sql: "SELECT distinct_id, COUNT(*) AS n, COUNT(DISTINCT anonymous_id || '/' || sequence) AS once FROM events GROUP BY 1")
                .map { row in (id: row["distinct_id"] as String, n: row["n"] as Int, once: row["once"] as Int) }
        }
        let expected = Dictionary(uniqueKeysWithValues: (0..<Self.users).map { (Self.distinctID($0), Self.requestsPerUser) })
        #expect(Dictionary(uniqueKeysWithValues: counts.map { ($0.id, $0.n) }) == expected)
        #expect(counts.allSatisfy { $0.once == $0.n }, "an event stored twice")
        #expect(counts.reduce(0) { $0 + $1.n } == Self.users * Self.requestsPerUser)
    }
}
