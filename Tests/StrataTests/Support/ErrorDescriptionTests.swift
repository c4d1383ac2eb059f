import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Real failures, produced through the public API, read the way an app reads them:
/// `localizedDescription` says what happened and where, and the `NSError` bridge carries the
/// "Strata" domain, the code's stable number and the context.
@Suite struct ErrorDescriptionTests {
    @Test func missingDirectoryAtOpen() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("no-such-directory") + "/store.sqlite"
        let error = try #require(await #expect(throws: StrataError.self) { _ = try await openStore(path) })

        let bridged = expectReadable(error, .cannotOpen, number: 7, saying: ["unable to open database file", path])
        #expect(bridged.userInfo[NSFilePathErrorKey] as? String == path)
        #expect(bridged.localizedRecoverySuggestion?.contains("directory exists") == true)
        #expect(bridged.userInfo[StrataError.UserInfoKey.sqliteCode] as? Int == 14)  // SQLITE_CANTOPEN
    }

    @Test func constraintFailureAtCommit() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try await openStore(path)
        var first = ChangeSet()
        first.insert(Article.make(1))
        try await store.submit(first).committed()
        var duplicate = ChangeSet()
        duplicate.insert(Article.make(1))
        let submission = try store.submit(duplicate)
        let error = try #require(await #expect(throws: StrataError.self) { try await submission.committed() })

        let bridged = expectReadable(error, .constraint, number: 5,
                                     saying: ["UNIQUE constraint failed", "entity Article", "id article-1", path])
        #expect(bridged.userInfo[StrataError.UserInfoKey.entity] as? String == "Article")
        #expect(bridged.userInfo[StrataError.UserInfoKey.objectID] as? String == "article-1")
        #expect(bridged.userInfo[NSFilePathErrorKey] as? String == path)
        #expect((bridged.userInfo[StrataError.UserInfoKey.sql] as? String)?.contains("INSERT") == true)
        #expect(bridged.localizedFailureReason?.contains("constraint failed") == true)
        #expect(bridged.localizedFailureReason?.contains("SQLite result code 19") == true)
    }

    @Test func unknownEntityAtSubmit() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("store.sqlite"), entities: [Feed.self])
        var changes = ChangeSet()
        changes.insert(Article.make(1))
        let error = try #require(#expect(throws: StrataError.self) { try store.submit(changes) })

        let bridged = expectReadable(error, .unknownEntity, number: 15, saying: ["Article", "was not registered"])
        #expect(bridged.userInfo[StrataError.UserInfoKey.entity] as? String == "Article")
        #expect(bridged.localizedRecoverySuggestion?.contains("Store.open") == true)
    }

    @Test func updateOfAMissingObject() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try await openStore(path)
        var changes = ChangeSet()
        changes.update(Article.make(99))
        let submission = try store.submit(changes)
        let error = try #require(await #expect(throws: StrataError.self) { try await submission.committed() })

        let bridged = expectReadable(error, .objectNotFound, number: 18, saying: ["Article", "article-99", "not in the store"])
        #expect(bridged.userInfo[StrataError.UserInfoKey.entity] as? String == "Article")
        #expect(bridged.userInfo[StrataError.UserInfoKey.objectID] as? String == "article-99")
        #expect(bridged.localizedRecoverySuggestion?.contains("upsert") == true)
    }

    @Test func fileThatIsNotADatabase() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("damaged.sqlite")
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: URL(fileURLWithPath: path))
        let error = try #require(await #expect(throws: StrataError.self) { _ = try await openStore(path) })

        let bridged = expectReadable(error, .notADatabase, number: 6, saying: ["not an SQLite database", path])
        #expect(bridged.userInfo[NSFilePathErrorKey] as? String == path)
        #expect(bridged.localizedRecoverySuggestion?.contains("backup") == true)
    }

    @Test func contextTheMessageAlreadyNamesIsNotRepeated() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try await openStore(path)
        try await store.close()
        let error = try #require(#expect(throws: StrataError.self) { try store.submit(ChangeSet()) })

        #expect(error.code == .closed)
        #expect(error.message.contains(path))
        #expect(error.localizedDescription.components(separatedBy: path).count == 2, "\(error.localizedDescription)")
        #expect((error as NSError).userInfo[NSFilePathErrorKey] as? String == path)

        // Whole words only: "t7" does not name the object 7.
        let named = StrataError(.objectNotFound, "cannot update Note 7: it is not in the store", entity: "Note", objectID: "7")
        #expect(named.localizedDescription == "Cannot update Note 7: it is not in the store.")
        let unnamed = StrataError(.constraint, "UNIQUE constraint failed: t7.x", entity: "Note", objectID: "7")
        #expect(unnamed.localizedDescription == "UNIQUE constraint failed: t7.x (entity Note, id 7).")
    }

    @Test func everyCodeHasItsOwnNumberAndExplanation() {
        let codes = StrataError.Code.Base.allCases
        #expect(Set(codes.map(\.number)) == Set(1...codes.count), "numbers are 1…n, each once")
        #expect(codes.allSatisfy { !$0.explanation.isEmpty })
        let error = StrataError(.misuse, "nothing else is known")
        #expect(error.localizedDescription == "Nothing else is known.")
        #expect((error as NSError).userInfo[StrataError.UserInfoKey.entity] == nil)
        #expect((error as NSError).userInfo[NSFilePathErrorKey] == nil)
    }
}

/// Checks what every bridged error must show — its code, its `localizedDescription` (read through
/// `Error`, the way apps read it) containing every fragment, the "Strata" domain and the code's
/// stable number — and returns the `NSError` for the checks particular to a failure.
@discardableResult
private func expectReadable(_ error: StrataError, _ code: StrataError.Code, number: Int, saying fragments: [String],
                            sourceLocation: SourceLocation = #_sourceLocation) -> NSError {
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    let text = (error as any Error).localizedDescription
    #expect(!text.contains("The operation could not be completed"), "\(text)", sourceLocation: sourceLocation)
    for fragment in fragments {
        #expect(text.contains(fragment), "\(text) lacks \(fragment)", sourceLocation: sourceLocation)
    }
    let bridged = error as NSError
    #expect(bridged.localizedDescription == text, sourceLocation: sourceLocation)
    #expect(bridged.domain == "Strata", sourceLocation: sourceLocation)
    #expect(bridged.code == number, sourceLocation: sourceLocation)
    return bridged
}
