// Lists the public symbols of Sources/Strata that have no doc comment of their own, from the
// symbol graphs SwiftPM writes, and exits 1 when there is any (CI's documentation stage):
//   swift package dump-symbol-graph --minimum-access-level public
//   swift Scripts/undocumented-symbols.swift .build/x86_64-unknown-linux-gnu/symbolgraph [--except <path prefix>]…
// A symbol counts once per declaration (file and line); members that only inherit a comment
// from a protocol, and compiler-synthesized members (no source location), are not listed.
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
var excluded: [String] = []   // path prefixes, e.g. Sources/Strata/Inspection/
while let flag = arguments.firstIndex(of: "--except"), flag + 1 < arguments.count {
    excluded.append(arguments[flag + 1])
    arguments.removeSubrange(flag...flag + 1)
}
guard arguments.count == 1 else {
    FileHandle.standardError.write(Data("usage: swift Scripts/undocumented-symbols.swift <symbolgraph directory> [--except <path prefix>]…\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: arguments[0])
let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
    .filter { $0.lastPathComponent.hasPrefix("Strata") && $0.lastPathComponent.hasSuffix(".symbols.json") }
guard !files.isEmpty else {
    FileHandle.standardError.write(Data("no Strata symbol graph in \(directory.path)\n".utf8))
    exit(2)
}

struct Graph: Decodable { let symbols: [Symbol] }
struct Symbol: Decodable {
    struct Kind: Decodable { let identifier: String }
    struct Location: Decodable {
        struct Position: Decodable { let line: Int }
        let uri: String
        let position: Position
    }
    struct DocComment: Decodable {
        struct Line: Decodable { let text: String }
        let module: String?
        let lines: [Line]
    }
    let kind: Kind
    let pathComponents: [String]
    let location: Location?
    let docComment: DocComment?
}

var undocumented: [String: String] = [:]   // "file:line" → what is declared there
for file in files {
    let graph = try JSONDecoder().decode(Graph.self, from: Data(contentsOf: file))
    for symbol in graph.symbols {
        guard let location = symbol.location, let range = location.uri.range(of: "/Sources/Strata/") else { continue }
        let ownComment = symbol.docComment.map { $0.module == "Strata" && $0.lines.contains { !$0.text.isEmpty } } ?? false
        if ownComment { continue }
        let place = "Sources/Strata/" + location.uri[range.upperBound...] + ":\(location.position.line + 1)"
        if excluded.contains(where: { place.hasPrefix($0) }) { continue }
        undocumented[place] = undocumented[place] ?? "\(symbol.kind.identifier) \(symbol.pathComponents.joined(separator: "."))"
    }
}
for place in undocumented.keys.sorted() { print("\(place): \(undocumented[place]!)") }
print("\(undocumented.count) public declarations without a doc comment")
exit(undocumented.isEmpty ? 0 : 1)
