import Foundation

/// A fresh directory per test, removed at the end: the one scratch-directory helper of both test
/// targets.
public final class TemporaryDirectory {
    /// The directory.
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A file's bytes and modification date, to prove that something did not write it.
public struct FileState: Equatable {
    public let bytes: Data?
    public let modified: Date?

    public init(_ path: String) {
        bytes = try? Data(contentsOf: URL(fileURLWithPath: path))
        modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }
}

/// The repository the tests were built from: the nearest directory above the calling source
/// file that holds `Package.swift` (so a test file may sit at any depth).
public func repositoryRoot(from file: String = #filePath) -> URL {
    var directory = URL(fileURLWithPath: file).deletingLastPathComponent()
    while directory.path != "/" {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) { return directory }
        directory.deleteLastPathComponent()
    }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
}
