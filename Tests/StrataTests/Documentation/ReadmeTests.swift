import Foundation
import StrataTestSupport
import Testing

/// The README's code compiles as it stands: the quick start's, "Evolving your entities"' and
/// "Sync with your own server"'s blocks are type-checked against the Strata module these tests were built with, warnings
/// treated as errors.
@Suite struct ReadmeTests {
    private static let root = repositoryRoot()

    /// The first ```swift block after the heading `heading`.
    static func block(after heading: String) throws -> String {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        guard let section = readme.range(of: heading),
              let open = readme.range(of: "```swift\n", range: section.upperBound..<readme.endIndex),
              let close = readme.range(of: "```", range: open.upperBound..<readme.endIndex) else {
            throw StrataTestError("README.md has no ```swift block under \"\(heading)\"")
        }
        return String(readme[open.upperBound..<close.lowerBound])
    }

    @Test func theQuickStartCompilesAsWritten() async throws {
        let code = try Self.block(after: "## Quick start")
        #expect(code.contains("import Strata"))
        #expect(code.contains("Store.openWarm"), "the quick start shows the warm start, Strata's reason to exist")
        try await Self.typecheck(code)
    }

    @Test func theEvolutionExampleCompilesAsWritten() async throws {
        let code = try Self.block(after: "## Evolving your entities")
        #expect(code.contains("formerAttributeNames"))
        try await Self.typecheck(code)
    }

    @Test func theSyncExampleCompilesAsWritten() async throws {
        let code = try Self.block(after: "## Sync with your own server")
        #expect(code.contains("import StrataSync") && code.contains("SyncEngine"))
        try await Self.typecheck(code)
    }

    private static func typecheck(_ code: String) async throws {
        // The built modules sit beside the test bundle, wherever the build folder is.
        let modules = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("Modules")
        guard FileManager.default.fileExists(atPath: modules.appendingPathComponent("Strata.swiftmodule").path) else {
            throw StrataTestError("no Strata.swiftmodule in \(modules.path); run the tests through `swift test`")
        }
        let directory = try TemporaryDirectory()
        let source = directory.path("main.swift")
        try code.write(toFile: source, atomically: true, encoding: .utf8)
        let sources = Self.root.appendingPathComponent("Sources")
        let run = try ProbeRun([
            "-typecheck", "-swift-version", "6", "-warnings-as-errors", source, "-I", modules.path,
            "-Xcc", "-fmodule-map-file=" + sources.appendingPathComponent("CSQLite/module.modulemap").path,
            "-Xcc", "-fmodule-map-file=" + sources.appendingPathComponent("CLZ4/module.modulemap").path,
        ], executable: try ExternalTools.find("swiftc"), errorsInOutput: true)
        let status = await run.exited(seconds: 240)
        let diagnostics = run.allLines.joined(separator: "\n")
        #expect(status.flatMap(ProbeRun.exitCode) == 0, "swiftc rejected the README's code:\n\(code)\n\(diagnostics)")
        #expect(!diagnostics.contains("warning:"), "\(diagnostics)")
    }
}
