// Lists the public symbols without a doc comment in the given modules' symbol graphs, one line each as
// `file:line:column: warning: …`, and exits 1 if there is any.
//   swift scripts/docs-coverage.swift SYMBOL_GRAPH_DIR MODULE...
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard let directory = arguments.first, arguments.count > 1 else {
    FileHandle.standardError.write(Data("usage: docs-coverage.swift SYMBOL_GRAPH_DIR MODULE...\n".utf8))
    exit(64)
}
var missing: [String] = []
var total = 0
for module in arguments.dropFirst() {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    let files = names.filter { $0 == "\(module).symbols.json" || $0.hasPrefix("\(module)@") }
    guard !files.isEmpty else {
        FileHandle.standardError.write(Data("docs-coverage: no symbol graph for \(module) in \(directory)\n".utf8))
        exit(1)
    }
    for file in files {
        guard let data = FileManager.default.contents(atPath: directory + "/" + file),
              let graph = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let symbols = graph["symbols"] as? [[String: Any]]
        else {
            FileHandle.standardError.write(Data("docs-coverage: cannot read \(file)\n".utf8))
            exit(1)
        }
        for symbol in symbols {
            guard let access = symbol["accessLevel"] as? String, access == "public" || access == "open" else { continue }
            // An extension block of another module's type is no declaration of its own: its members are counted.
            if (symbol["kind"] as? [String: Any])?["identifier"] as? String == "swift.extension" { continue }
            total += 1
            if let comment = symbol["docComment"] as? [String: Any], let lines = comment["lines"] as? [Any], !lines.isEmpty { continue }
            let path = (symbol["pathComponents"] as? [String])?.joined(separator: ".") ?? "?"
            let kind = ((symbol["kind"] as? [String: Any])?["displayName"] as? String ?? "symbol").lowercased()
            var place = module
            if let location = symbol["location"] as? [String: Any], let uri = location["uri"] as? String {
                let position = location["position"] as? [String: Any]
                let line = (position?["line"] as? Int).map { $0 + 1 } ?? 1
                let column = (position?["character"] as? Int).map { $0 + 1 } ?? 1
                place = "\(URL(string: uri)?.path ?? uri):\(line):\(column)"
            }
            missing.append("\(place): warning: public \(kind) \(module).\(path) has no doc comment")
        }
    }
}
for line in missing.sorted() { print(line) }
print("docs-coverage: \(total - missing.count) of \(total) public symbols documented")
exit(missing.isEmpty ? 0 : 1)
