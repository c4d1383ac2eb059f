import Foundation
import StrataTestSupport

/// Programs the tests run as other processes, found on PATH like a shell would.
enum ExternalTools {
    /// The first executable called `name` on PATH.
    static func find(_ name: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw StrataTestError("no \(name) on PATH (\(path)); Scripts/setup installs what the tests need")
    }

    /// Runs the `sqlite3` shell on `database` with `sql` as a separate process (another
    /// application writing the file) and returns its output lines; throws when it fails.
    static func sqlite3(_ database: String, _ sql: String) async throws -> [String] {
        let run = try ProbeRun(["-bail", database, sql], executable: try find("sqlite3"), errorsInOutput: true)
        let status = await run.exited(seconds: 60)
        guard let status, ProbeRun.exitCode(status) == 0 else {
            throw StrataTestError("sqlite3 failed (\(String(describing: status))): \(run.allLines.joined(separator: "\n"))")
        }
        return run.allLines
    }
}
