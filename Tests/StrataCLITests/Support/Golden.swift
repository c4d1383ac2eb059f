import Foundation
import StrataTestSupport
import Testing

/// Golden-output comparison: the output, with what varies between runs replaced by placeholders
/// (the temporary directory, UUIDs, creation and migration times, byte sizes and compression ratios), must equal
/// the file in `Golden/`. Run with `STRATA_UPDATE_GOLDEN=1` to rewrite the files after a
/// deliberate change, and review the diff.
enum Golden {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Golden")

    static func normalize(_ text: String, directory: String) -> String {
        var lines: [String] = []
        for line in text.components(separatedBy: "\n") {
            var normalized = line.replacingOccurrences(of: directory, with: "<DIR>")
            let rules: [(String, String)] = [
                ("[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}", "<UUID>"),
                ("^(created +)\\S+$", "$1<TIME>"),
                ("(\"createdAt\": )\"[^\"]*\"", "$1\"<TIME>\""),
                ("(\"appliedAt\": )\"[^\"]*\"", "$1\"<TIME>\""),
                ("^(token [0-9]+  )\\S+", "$1<TIME>"),
                ("(\"date\":)\"[^\"]*\"", "$1\"<TIME>\""),
                ("^(  )[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?(?= )", "$1<TIME>"),
                ("-?[0-9]+(\\.[0-9]+)? (B|KiB|MiB|GiB)\\b", "<SIZE>"),
                ("[0-9]+\\.[0-9]×", "<RATIO>"),
                ("(\"(databaseBytes|walBytes|pages|freePages|fileBytes|compressedBytes|compressionRatio)\": )[0-9.]+", "$1<N>"),
                ("[0-9,]+ pages of", "<N> pages of"),
                ("<SIZE>, [0-9,]+ free", "<SIZE>, <N> free"),
            ]
            for (pattern, template) in rules {
                normalized = normalized.replacingOccurrences(of: pattern, with: template, options: .regularExpression)
            }
            // Placeholders change column widths: compare such lines without their alignment.
            if normalized != line.replacingOccurrences(of: directory, with: "<DIR>") {
                normalized = normalized.replacingOccurrences(of: "(?<=\\S) {2,}", with: "  ", options: .regularExpression)
            }
            lines.append(normalized)
        }
        return lines.joined(separator: "\n")
    }

    /// Checks `text` (normalized) against `Golden/<name>`.
    static func check(_ text: String, _ name: String, directory fixtureDirectory: String,
                      sourceLocation: SourceLocation = #_sourceLocation) {
        let normalized = normalize(text, directory: fixtureDirectory)
        let file = directory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["STRATA_UPDATE_GOLDEN"] == "1" {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try? normalized.write(to: file, atomically: true, encoding: .utf8)
            return
        }
        guard let expected = try? String(contentsOf: file, encoding: .utf8) else {
            Issue.record("no golden file \(file.path); run the tests with STRATA_UPDATE_GOLDEN=1 to create it",
                         sourceLocation: sourceLocation)
            return
        }
        #expect(normalized == expected, "differs from Golden/\(name)", sourceLocation: sourceLocation)
    }
}

extension Golden {
    /// Runs `strata arguments` in-process on `fixture` and expects status 0, nothing on standard
    /// error, and standard output equal to `Golden/<name>`.
    @MainActor
    static func expect(_ arguments: [String], _ name: String, _ fixture: ReaderFixture,
                       sourceLocation: SourceLocation = #_sourceLocation) async {
        let result = await runCLI(arguments)
        #expect(result.code == 0, "\(arguments): \(result.error)", sourceLocation: sourceLocation)
        #expect(result.error.isEmpty, sourceLocation: sourceLocation)
        check(result.output, name, directory: fixture.directory, sourceLocation: sourceLocation)
    }
}
