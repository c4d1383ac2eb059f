// Checks Design.md's code map against the code: every reference from a folder of Sources/Strata to
// a type declared in another folder must follow an arrow of the "may use" table.
//
//   swift Scripts/check-code-map.swift            (from the repository root; .ci/run runs it)
//
// A folder's types are the top-level `struct`, `class`, `enum`, `protocol`, `actor` and
// `typealias` declarations of its files. A file references a type when the type's name appears in
// its code (comments and string literals are ignored). Exits 1 and lists each reference across a
// forbidden boundary, with the file and line; exits 0 when the map holds.
import Foundation

let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
let sources = root.appendingPathComponent("Sources/Strata")

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("check-code-map: \(message)\n".utf8))
    exit(2)
}

// MARK: The table

guard let design = try? String(contentsOf: root.appendingPathComponent("Design.md"), encoding: .utf8) else {
    fail("run from the repository root (no Design.md here)")
}
// Arrows are layered: a folder may use what it names, and what those may use, and so on;
// "all of the above" names every folder of the rows above it.
var allowed: [String: Set<String>] = [:]
var order: [String] = []
for line in design.split(separator: "\n") where line.hasPrefix("| `") {
    let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
    guard cells.count >= 4, cells[1].hasPrefix("`"), cells[1].hasSuffix("/`") else { continue }
    let folder = String(cells[1].dropFirst().dropLast(2))
    guard FileManager.default.fileExists(atPath: sources.appendingPathComponent(folder).path) else { continue }
    let named = cells[3] == "—" ? [] : cells[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    let uses = named == ["all of the above"] ? order : named
    for use in uses where !order.contains(use) && use != "all of the above" {
        fail("Design.md's code map: \(folder)/ may use \(use), which is not a folder above it")
    }
    allowed[folder] = Set(uses).union(uses.flatMap { allowed[$0] ?? [] })
    order.append(folder)
}
let folders = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
for folder in folders where !folder.hasSuffix(".docc") && !folder.hasPrefix(".") && allowed[folder] == nil {
    fail("Design.md's code map has no row for Sources/Strata/\(folder)/")
}

// MARK: The code

/// The file's code with comments and string literals blanked out (line breaks kept).
func code(_ text: String) -> String {
    var result = ""
    var iterator = Array(text.unicodeScalars)[...]
    var inLine = false, blockDepth = 0, inString = false, multiline = false
    while let scalar = iterator.popFirst() {
        let next = iterator.first
        if inLine {
            if scalar == "\n" { inLine = false; result.unicodeScalars.append(scalar) }
            continue
        }
        if blockDepth > 0 {
            if scalar == "*", next == "/" { blockDepth -= 1; iterator.removeFirst() } else if scalar == "/", next == "*" {
                blockDepth += 1; iterator.removeFirst()
            } else if scalar == "\n" { result.unicodeScalars.append(scalar) }
            continue
        }
        if inString {
            if scalar == "\\" { _ = iterator.popFirst(); continue }
            if scalar == "\"" {
                if multiline {
                    if iterator.starts(with: ["\"", "\""]) { iterator.removeFirst(2); inString = false }
                } else {
                    inString = false
                }
            } else if scalar == "\n" { result.unicodeScalars.append(scalar) }
            continue
        }
        if scalar == "/", next == "/" { inLine = true; continue }
        if scalar == "/", next == "*" { blockDepth = 1; iterator.removeFirst(); continue }
        if scalar == "\"" {
            inString = true
            multiline = iterator.starts(with: ["\"", "\""])
            if multiline { iterator.removeFirst(2) }
            result.unicodeScalars.append(" ")
            continue
        }
        result.unicodeScalars.append(scalar)
    }
    return result
}

struct SourceFile {
    let folder: String
    let path: String
    let lines: [Substring]
}

var files: [SourceFile] = []
var owner: [String: String] = [:]   // type name → folder
let declaration = try! NSRegularExpression(
    pattern: #"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|package|private|fileprivate|final|indirect|nonisolated)\s+)*(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)"#)
for folder in allowed.keys.sorted() {
    let directory = sources.appendingPathComponent(folder)
    let names = (FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
    for name in names.sorted() {
        let path = directory.appendingPathComponent(name).path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read \(path)") }
        let lines = code(text).split(separator: "\n", omittingEmptySubsequences: false)
        files.append(SourceFile(folder: folder, path: "Sources/Strata/\(folder)/\(name)", lines: lines))
        for line in lines {
            let string = String(line)
            let range = NSRange(string.startIndex..., in: string)
            guard let match = declaration.firstMatch(in: string, range: range),
                  let nameRange = Range(match.range(at: 1), in: string) else { continue }
            let type = String(string[nameRange])
            if let other = owner[type], other != folder { fail("\(type) is declared in both \(other)/ and \(folder)/") }
            owner[type] = folder
        }
    }
}

// MARK: The check

let identifier = try! NSRegularExpression(pattern: #"\b[A-Z][A-Za-z0-9_]*\b"#)
var violations: [String] = []
for file in files {
    let permitted = allowed[file.folder]!
    for (number, line) in file.lines.enumerated() {
        let string = String(line)
        var seen: Set<String> = []
        for match in identifier.matches(in: string, range: NSRange(string.startIndex..., in: string)) {
            guard let range = Range(match.range, in: string) else { continue }
            let name = String(string[range])
            guard seen.insert(name).inserted, let target = owner[name], target != file.folder,
                  !permitted.contains(target) else { continue }
            violations.append("\(file.path):\(number + 1): \(file.folder)/ uses \(name) (\(target)/), "
                              + "but may use only \(permitted.isEmpty ? "nothing" : permitted.sorted().joined(separator: ", "))")
        }
    }
}

if violations.isEmpty {
    print("check-code-map: the code map holds (\(files.count) files, \(owner.count) types, \(allowed.count) folders)")
} else {
    print(violations.joined(separator: "\n"))
    print("check-code-map: \(violations.count) reference\(violations.count == 1 ? "" : "s") across a forbidden boundary "
          + "(Design.md, \"Code map\"): move the code, or change the design and its table")
    exit(1)
}
