import Foundation

/// This executable re-run as a child in a hidden mode (M1's memory child, H4's history reader):
/// the child prints what it measured as one JSON line, last, and exits 0.
enum ChildProcess {
    /// Runs the child with `arguments` and decodes the last line it printed; `what` names it in
    /// the error when it fails.
    static func run<Reading: Decodable>(_ arguments: [String], what: String) throws -> Reading {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last else {
            throw BenchmarkError("\(what) failed with status \(process.terminationStatus)")
        }
        return try JSONDecoder().decode(Reading.self, from: Data(line.utf8))
    }
}
