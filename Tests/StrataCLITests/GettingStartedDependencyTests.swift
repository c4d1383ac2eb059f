import Foundation
@testable import StrataCLICore
import StrataTestSupport
import Testing

/// The dependency lines Getting Started shows: the released version, and a `package:` argument
/// that is the identity SwiftPM gives each form of dependency.
@Suite struct GettingStartedDependencyTests {
    /// Each `.package(…)` line of the article with the `.product(…)` line after it.
    private func dependencies() throws -> [(package: String, product: String)] {
        let article = repositoryRoot().appendingPathComponent("Sources/Strata/Strata.docc/GettingStarted.md")
        let lines = try String(contentsOf: article, encoding: .utf8).split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        return lines.indices.compactMap { index in
            guard lines[index].hasPrefix(".package(") else { return nil }
            return lines[(index + 1)...].first { $0.hasPrefix(".product(") }.map { (lines[index], $0) }
        }
    }

    /// The value of `label: "…"` in `line`.
    private func argument(_ label: String, in line: String) -> String? {
        guard let start = line.range(of: label + ": \"") else { return nil }
        return line[start.upperBound...].split(separator: "\"", maxSplits: 1).first.map(String.init)
    }

    @Test func theURLDependencyNamesTheReleasedVersionAndTheURLsIdentity() throws {
        let url = try #require(try dependencies().first { $0.package.hasPrefix(".package(url:") })
        #expect(argument("from", in: url.package) == StrataVersion.current)
        let location = try #require(argument("url", in: url.package))
        // SwiftPM's identity for a URL: its last path component, without `.git`, in lowercase.
        var identity = try #require(URL(string: location)).lastPathComponent.lowercased()
        if identity.hasSuffix(".git") { identity.removeLast(4) }
        #expect(argument("package", in: url.product) == identity)
        #expect(argument("name", in: url.product) == "Strata")
    }

    @Test func thePathDependencyNamesTheFoldersIdentity() throws {
        let path = try #require(try dependencies().first { $0.package.hasPrefix(".package(path:") })
        let folder = try #require(argument("path", in: path.package))
        // SwiftPM's identity for a path: the folder's name, in lowercase.
        #expect(argument("package", in: path.product) == URL(fileURLWithPath: folder).lastPathComponent.lowercased())
        #expect(argument("name", in: path.product) == "Strata")
    }
}
