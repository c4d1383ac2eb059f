import Foundation
@testable import Strata
import StrataTestSupport
import Testing

// A site as successive releases declare it: `homepage` becomes `website` without
// `formerAttributeNames`, so to Strata `homepage` went and `website` came.

private struct SiteV1: Entity, Equatable {
    var id: String
    var name: String
    var homepage: String?
    var feed: String?
    var logo: String?
    static let entityName = "RefusalSite"
    static let tableName = "refusal_sites"
}

/// `homepage` renamed `website` (optional), not declared; `feed` and `logo` kept.
private struct SiteOptionalWebsite: Entity, Equatable {
    var id: String
    var name: String
    var website: String?
    var feed: String?
    var logo: String?
    static let entityName = "RefusalSite"
    static let tableName = "refusal_sites"
}

/// `homepage` renamed `website` (non-optional, no default), not declared.
private struct SiteRequiredWebsite: Entity, Equatable {
    var id: String
    var name: String
    var website: String
    var feed: String?
    var logo: String?
    static let entityName = "RefusalSite"
    static let tableName = "refusal_sites"
}

/// `homepage` renamed `website`, `feed` and `logo` removed, none of it declared.
private struct SiteWebsiteOnly: Entity, Equatable {
    var id: String
    var name: String
    var website: String?
    static let entityName = "RefusalSite"
    static let tableName = "refusal_sites"
}

/// 500 sites, each with a homepage; every fourth with a feed (125); none with a logo.
private let sites = (0..<500).map {
    SiteV1(id: "s\($0)", name: "site \($0)", homepage: "https://example.com/\($0)",
           feed: $0 % 4 == 0 ? "https://example.com/\($0)/feed" : nil, logo: nil)
}

/// A refused open names the stored columns the entity no longer declares that hold values, and
/// how many each holds, so the app knows what to declare; the file stays as it was.
@Suite struct RenameRefusalTests {
    private func write(to path: String) async throws {
        let store = try await openStore(path, entities: [SiteV1.self])
        var changes = ChangeSet()
        sites.forEach { changes.insert($0) }
        try await store.submit(changes).committed()
        try await store.close()
    }

    /// Opens `path` with `type`, expecting `.incompatibleSchema` for `attribute`; checks the file
    /// is byte for byte what it was and returns the message.
    private func refusal<E: Entity>(_ type: E.Type, at path: String, attribute: String,
                                    sourceLocation: SourceLocation = #_sourceLocation) async -> String {
        let before = FileState(path)
        let error = await #expect(throws: StrataError.self, sourceLocation: sourceLocation) {
            _ = try await openStore(path, entities: [E.self])
        }
        #expect(error?.code == .incompatibleSchema, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.entity == E.entityName, sourceLocation: sourceLocation)
        #expect(error?.attribute == attribute, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(FileState(path) == before, "the refused open changed the file", sourceLocation: sourceLocation)
        return error?.message ?? ""
    }

    @Test func anUndeclaredRenameToAnOptionalAttributeNamesTheStoredColumnAndItsValues() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("optional.sqlite")
        try await write(to: path)
        let message = await refusal(SiteOptionalWebsite.self, at: path, attribute: "homepage")
        #expect(message.contains("column \"homepage\" holds 500 values"), "\(message)")
        #expect(message.contains("Nothing was changed"), "\(message)")
        #expect(message.contains("formerAttributeNames"), "\(message)")
        #expect(message.contains("discardedAttributes"), "\(message)")
        // Declared columns are not named, however many values they hold.
        #expect(!message.contains("column \"feed\""), "\(message)")
        #expect(!message.contains("column \"name\""), "\(message)")

        // The old declaration still opens the file, every value intact.
        let store = try await openStore(path, entities: [SiteV1.self])
        #expect(try await store.fetch(Query<SiteV1>(sortedBy: [Attribute("id").ascending]))
                == sites.sorted { $0.id < $1.id })
        try await store.close()
    }

    @Test func anUndeclaredRenameToARequiredAttributeNamesTheStoredColumnAndItsValues() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("required.sqlite")
        try await write(to: path)
        // Refused for the new attribute first (500 rows without a value): the message still
        // points at the column that holds them.
        let message = await refusal(SiteRequiredWebsite.self, at: path, attribute: "website")
        #expect(message.contains("column \"homepage\" holds 500 values"), "\(message)")
        #expect(message.contains("500 rows"), "\(message)")
        #expect(message.contains("formerAttributeNames"), "\(message)")
        #expect(message.contains("Nothing was changed"), "\(message)")
    }

    @Test func everyUndeclaredColumnHoldingValuesIsNamedWithItsCount() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("several.sqlite")
        try await write(to: path)
        let message = await refusal(SiteWebsiteOnly.self, at: path, attribute: "feed")
        #expect(message.contains("column \"homepage\" holds 500 values"), "\(message)")
        #expect(message.contains("column \"feed\" holds 125 values"), "\(message)")
        // A column with no value loses nothing: it is not named.
        #expect(!message.contains("column \"logo\""), "\(message)")
    }
}
