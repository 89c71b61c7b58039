import Foundation
import SpoorCollectorTestSupport
import Testing

@Suite("What the shipped executables link", .timeLimit(.minutes(10)))
struct LinkTests {
    /// The shipped executables and the Spoor modules each may hold code of: the package's own, the root's
    /// `SpoorWire` product (`SpoorWire`, `SpoorModel`) and its `SpoorSystem` product (the lock, the promise, threads
    /// for blocking work: the concurrency vocabulary every Spoor package shares, which depends on nothing and
    /// holds no tracker code); the load tool also makes its events with `SpoorWorkload` and times SQLite alone
    /// with `SpoorCollectorSQLite`.
    /// `override` names the environment variable that points at another build of it.
    static let products: [(name: String, override: String, allowed: Set<String>)] = [
        (
            "spoor-collector", "SPOOR_COLLECTOR_BIN",
            [
                "SpoorCollector", "SpoorCollectorCore", "SpoorCollectorSQLite", "SpoorCollectorPostgres", "SpoorCollectorNATS",
                "SpoorWire", "SpoorModel", "SpoorSystem",
            ]
        ),
        (
            "spoor-collector-load", "SPOOR_COLLECTOR_LOAD_BIN",
            [
                "SpoorCollectorLoad", "SpoorCollectorCore", "SpoorCollectorSQLite", "SpoorLoopback", "SpoorWire", "SpoorModel",
                "SpoorSystem", "SpoorWorkload",
            ]
        ),
    ]

    /// The Spoor modules that define Swift symbols in `binary`, from the module that leads each mangled name
    /// (`$s9SpoorWire…`): a module's own functions, types, conformances and metadata all start with it, so a
    /// module linked in at all shows up here.
    static func spoorModules(in binary: URL) async throws -> Set<String> {
        let listing = try await Command.run("nm", ["--defined-only", binary.path])
        var modules: Set<String> = []
        for line in listing.split(separator: "\n") {
            // Mach-O names carry a leading underscore.
            guard let name = line.split(separator: " ").last else { continue }
            let symbol = name.hasPrefix("_$s") ? name.dropFirst() : name[...]
            guard symbol.hasPrefix("$s") else { continue }
            let mangled = symbol.dropFirst(2)
            let digits = mangled.prefix { $0.isASCII && $0.isNumber }
            guard let length = Int(digits), length > 0 else { continue }
            let module = mangled.dropFirst(digits.count).prefix(length)
            if module.count == length, module.hasPrefix("Spoor") { modules.insert(String(module)) }
        }
        return modules
    }

    @Test("the shipped executables hold no tracker code: no symbol of SpoorTracker, SpoorLog or SpoorUpload",
          arguments: products.map(\.name))
    func noTrackerCode(product: String) async throws {
        let (_, override, allowed) = try #require(Self.products.first { $0.name == product })
        let binary = try CollectorProcess.builtProduct(product, override: override)
        let modules = try await Self.spoorModules(in: binary)
        // The listing must be of a Swift binary with its symbols, or an empty set would prove nothing.
        #expect(modules.isSuperset(of: ["SpoorCollectorCore", "SpoorWire", "SpoorModel"]), "\(binary.path): \(modules.sorted())")
        // SpoorSystem is allowed: it is the shared concurrency vocabulary (the collector's locks and promises),
        // not the tracker's machinery, and it brings no dependency of its own. The log, the uploader and the
        // tracker stay out.
        for tracker in ["SpoorTracker", "SpoorLog", "SpoorUpload"] {
            #expect(!modules.contains(tracker), "\(binary.path) links \(tracker)")
        }
        #expect(modules.subtracting(allowed).isEmpty, "unexpected modules in \(binary.path): \(modules.subtracting(allowed).sorted())")
    }

    @Test("the check sees tracker code where it is linked: the upload child holds SpoorTracker, SpoorLog and SpoorUpload")
    func checkSeesTrackerCode() async throws {
        let child = try CollectorProcess.builtProduct("SpoorUploadChild", override: "SPOOR_UPLOAD_CHILD_BIN")
        let modules = try await Self.spoorModules(in: child)
        #expect(modules.isSuperset(of: ["SpoorTracker", "SpoorLog", "SpoorUpload"]), "\(modules.sorted())")
    }
}
