// Checks Design.md's code map against what the compiler sees: every reference from a folder of
// Sources/Strata to a declaration made in another folder must be one that folder's row of the
// "may use" table names.
//
//   Scripts/check-code-map          (from the repository root, after `swift build`; .ci/run runs it)
//
// It reads the index the compiler writes while building (`.build/debug/index/store`), not the
// source text: a declaration belongs to the folder of the file that declares it — a member added
// in `extension Store` in Context/ is Context/'s, wherever `Store` is declared — and a reference
// is whatever the compiler resolved to that declaration (`store.mainContext`, an initializer, an
// operator, a type), so names that several folders use for different things are never confused.
// Implicit references (ones the compiler adds, with no name written at them) and local symbols
// are left out.
//
// The table is read as written, not transitively: a folder may use the folders its row names
// ("all of the above": every folder of the rows above it), and no others. Transitivity would let
// a folder reach everything below anything it names, which makes the table a linear order and
// hides a dependency nobody decided on.
//
// Exits 1 and lists each reference across a forbidden boundary with its file, line and column;
// 0 when the map holds; 2 when it cannot check (no index, no table). Options, for the checker's
// own test (Scripts/test-check-code-map): --root DIR (holding Design.md and the sources),
// --sources PATH (Sources/Strata), --index-store DIR (ROOT/.build/debug/index/store),
// --module NAME (Strata).
import CIndexStore
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("check-code-map: \(message)\n".utf8))
    exit(2)
}

// MARK: Options

var options = ["--root": FileManager.default.currentDirectoryPath, "--sources": "Sources/Strata", "--module": "Strata"]
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard options.keys.contains(name) || name == "--index-store", let value = arguments.popFirst() else {
        fail("usage: check-code-map [--root DIR] [--sources PATH] [--index-store DIR] [--module NAME]")
    }
    options[name] = value
}
let root = URL(fileURLWithPath: options["--root"]!).standardizedFileURL
let sources = root.appendingPathComponent(options["--sources"]!).standardizedFileURL
let storePath = options["--index-store"] ?? root.appendingPathComponent(".build/debug/index/store").path
let module = options["--module"]!

// MARK: The table

guard let design = try? String(contentsOf: root.appendingPathComponent("Design.md"), encoding: .utf8) else {
    fail("no Design.md in \(root.path)")
}
var allowed: [String: Set<String>] = [:]
var order: [String] = []
for line in design.split(separator: "\n") where line.hasPrefix("| `") {
    let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
    guard cells.count >= 4, cells[1].hasPrefix("`"), cells[1].hasSuffix("/`") else { continue }
    let folder = String(cells[1].dropFirst().dropLast(2))
    guard FileManager.default.fileExists(atPath: sources.appendingPathComponent(folder).path) else { continue }
    let named = cells[3] == "—" ? [] : cells[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    let uses = named == ["all of the above"] ? order : named
    for use in uses where !order.contains(use) {
        fail("Design.md's code map: \(folder)/ may use \(use), which is not a folder above it")
    }
    allowed[folder] = Set(uses)
    order.append(folder)
}
let folders = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
for folder in folders where !folder.hasSuffix(".docc") && !folder.hasPrefix(".") && allowed[folder] == nil {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: sources.appendingPathComponent(folder).path, isDirectory: &isDirectory),
       isDirectory.boolValue {
        fail("Design.md's code map has no row for \(options["--sources"]!)/\(folder)/")
    }
}

/// The folder of the source file at `path`, or nil for a file outside the sources.
func folder(of path: String) -> String? {
    let prefix = sources.path + "/"
    guard path.hasPrefix(prefix) else { return nil }
    let relative = path.dropFirst(prefix.count)
    guard let slash = relative.firstIndex(of: "/") else { return nil }
    return String(relative[..<slash])
}

// MARK: The index

func string(_ reference: indexstore_string_ref_t) -> String {
    guard let data = reference.data else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: data, count: reference.length), as: UTF8.self)
}

struct Occurrence {
    let usr: String
    let name: String
    let roles: UInt64
    let line: Int
    let column: Int
}

/// What the index's C callbacks collect, handed to them as their context pointer.
final class Collected {
    var units: [String] = []
    var records: [(path: String, name: String)] = []
    var occurrences: [Occurrence] = []

    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    static func from(_ context: UnsafeMutableRawPointer?) -> Collected {
        Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
    }
}

var creationError: indexstore_error_t?
guard FileManager.default.fileExists(atPath: storePath),
      let store = indexstore_store_create(storePath, &creationError) else {
    let reason = creationError.flatMap { indexstore_error_get_description($0) }.map { String(cString: $0) } ?? "it is missing"
    fail("cannot read the index store at \(storePath) (\(reason)): build first (`swift build` indexes while it builds)")
}
defer { indexstore_store_dispose(store) }

let stored = Collected()
indexstore_store_units_apply_f(store, 0, stored.context) { context, name in
    Collected.from(context).units.append(string(name))
    return true
}

/// The record of each source file of the module (its occurrences), by file, from the newest unit
/// of the module's compilations that names it; files no longer there (a stale unit's) are left out.
var records: [String: String] = [:]
var recordTimes: [String: Double] = [:]
for unitName in stored.units {
    guard let unit = indexstore_unit_reader_create(store, unitName, nil) else { continue }
    defer { indexstore_unit_reader_dispose(unit) }
    guard string(indexstore_unit_reader_get_module_name(unit)) == module else { continue }
    var seconds: Int64 = 0, nanoseconds: Int64 = 0
    indexstore_unit_reader_get_modification_time(unit, &seconds, &nanoseconds)
    let time = Double(seconds) + Double(nanoseconds) / 1e9
    let dependencies = Collected()
    indexstore_unit_reader_dependencies_apply_f(unit, dependencies.context) { context, dependency in
        guard let dependency, indexstore_unit_dependency_get_kind(dependency) == INDEXSTORE_UNIT_DEPENDENCY_RECORD else {
            return true
        }
        Collected.from(context).records.append(
            (string(indexstore_unit_dependency_get_filepath(dependency)), string(indexstore_unit_dependency_get_name(dependency))))
        return true
    }
    for (path, record) in dependencies.records where folder(of: path) != nil && FileManager.default.fileExists(atPath: path)
    && time >= recordTimes[path, default: -.infinity] {
        (records[path], recordTimes[path]) = (record, time)
    }
}
let files = (FileManager.default.enumerator(atPath: sources.path)?.allObjects as? [String] ?? [])
    .filter { $0.hasSuffix(".swift") }.map { sources.appendingPathComponent($0).path }
for file in files.sorted() where records[file] == nil {
    fail("the index store at \(storePath) has no record of \(file): build first (`swift build` indexes while it builds)")
}

let declaration = UInt64(INDEXSTORE_SYMBOL_ROLE_DECLARATION | INDEXSTORE_SYMBOL_ROLE_DEFINITION)
let reference = UInt64(INDEXSTORE_SYMBOL_ROLE_REFERENCE)
let implicit = UInt64(INDEXSTORE_SYMBOL_ROLE_IMPLICIT)

var occurrences: [String: [Occurrence]] = [:]   // by file
for (path, record) in records {
    guard let reader = indexstore_record_reader_create(store, record, nil) else { fail("cannot read the index record of \(path)") }
    defer { indexstore_record_reader_dispose(reader) }
    let found = Collected()
    indexstore_record_reader_occurrences_apply_f(reader, found.context) { context, occurrence in
        guard let occurrence, let symbol = indexstore_occurrence_get_symbol(occurrence),
              UInt64(indexstore_symbol_get_properties(symbol)) & UInt64(INDEXSTORE_SYMBOL_PROPERTY_LOCAL) == 0 else { return true }
        var line: UInt32 = 0, column: UInt32 = 0
        indexstore_occurrence_get_line_col(occurrence, &line, &column)
        Collected.from(context).occurrences.append(
            Occurrence(usr: string(indexstore_symbol_get_usr(symbol)), name: string(indexstore_symbol_get_name(symbol)),
                       roles: UInt64(indexstore_occurrence_get_roles(occurrence)), line: Int(line), column: Int(column)))
        return true
    }
    occurrences[path] = found.occurrences
}

// MARK: The check

/// Where each declaration of the module is made: the folder of the file that declares it.
var owner: [String: String] = [:]
for (path, found) in occurrences {
    for occurrence in found where occurrence.roles & declaration != 0 { owner[occurrence.usr] = folder(of: path) }
}

var violations: [String] = []
var checked = 0
for (path, found) in occurrences.sorted(by: { $0.key < $1.key }) {
    let from = folder(of: path)!
    let relative = String(path.dropFirst(root.path.count + 1))
    var reported: Set<String> = []
    for occurrence in found.sorted(by: { ($0.line, $0.column) < ($1.line, $1.column) })
    where occurrence.roles & reference != 0 && occurrence.roles & (declaration | implicit) == 0 {
        guard let target = owner[occurrence.usr], target != from else { continue }
        checked += 1
        guard !allowed[from]!.contains(target), reported.insert("\(occurrence.line) \(occurrence.usr)").inserted else { continue }
        let permitted = allowed[from]!.isEmpty ? "no other folder" : "only " + allowed[from]!.sorted().joined(separator: ", ")
        violations.append("\(relative):\(occurrence.line):\(occurrence.column): \(from)/ uses \(occurrence.name) "
                          + "(declared in \(target)/), but may use \(permitted)")
    }
}

if violations.isEmpty {
    print("check-code-map: the code map holds (\(records.count) files, \(owner.count) declarations, "
          + "\(checked) references across folders, \(allowed.count) folders)")
} else {
    print(violations.joined(separator: "\n"))
    print("check-code-map: \(violations.count) reference\(violations.count == 1 ? "" : "s") across a forbidden boundary "
          + "(Design.md, \"Code map\"): move the code, or change the design and its table")
    exit(1)
}
