import Foundation
@testable import Strata
import StrataTestSupport
import Testing

enum ConflictKind: String, CaseIterable, Sendable {
    case updateUpdate, updateDelete, deleteUpdate
}

enum ContextKind: String, CaseIterable, Sendable { case main, worker }

/// The original object, and the local and remote edits every conflict case applies (here and in
/// `OutsideWriteTests`, whose remote edit an outside writer makes): different attributes.
enum ConflictEdits {
    static let original = Article.make(1)
    static func local(_ article: Article) -> Article { var copy = article; copy.title = "local title"; return copy }
    static func remote(_ article: Article) -> Article {
        var copy = article
        copy.summary = "remote summary"
        copy.isStarred = true
        return copy
    }

    /// A worker with `policy` that read every article and made the local side of `kind`.
    static func localWorker(_ store: Store, policy: MergePolicy, kind: ConflictKind) async throws -> WorkerContext {
        let worker = store.makeWorkerContext(name: "local", mergePolicy: policy)
        _ = try await worker.fetch(Query<Article>())
        if kind == .deleteUpdate {
            try await worker.delete(Article.self, id: original.id)
        } else {
            try await worker.update(local(original))
        }
        return worker
    }
}
private let original = ConflictEdits.original
private func localEdit(_ article: Article) -> Article { ConflictEdits.local(article) }
private func remoteEdit(_ article: Article) -> Article { ConflictEdits.remote(article) }

/// What the context should show after the merge, and what the store should hold after it saves.
private func expected(_ policy: MergePolicy, _ kind: ConflictKind) -> (shown: Article?, stored: Article?, saveThrows: Bool) {
    let local = localEdit(original), remote = remoteEdit(original)
    var merged = remote
    merged.title = local.title
    switch (kind, policy) {
    case (.updateUpdate, .localWins): return (local, local, false)
    case (.updateUpdate, .storeWins): return (remote, remote, false)
    case (.updateUpdate, .mergeProperties): return (merged, merged, false)
    case (.updateUpdate, .reportConflict): return (local, remote, true)
    case (.updateDelete, .localWins): return (local, local, false)
    case (.updateDelete, .storeWins), (.updateDelete, .mergeProperties): return (nil, nil, false)
    case (.updateDelete, .reportConflict): return (local, nil, true)
    case (.deleteUpdate, .localWins), (.deleteUpdate, .mergeProperties): return (nil, nil, false)
    case (.deleteUpdate, .storeWins): return (remote, remote, false)
    case (.deleteUpdate, .reportConflict): return (nil, remote, true)
    }
}

private let policies: [MergePolicy] = [.localWins, .storeWins, .mergeProperties, .reportConflict]

@MainActor
@Suite struct ConflictMatrixTests {
    @Test(arguments: policies, ConflictKind.allCases)
    func onMainContext(policy: MergePolicy, kind: ConflictKind) async throws {
        try await onMainContext(policy: policy, kind: kind, preparedOffMainActor: false)
    }

    /// The same cases with the remote change merged off the main actor on a copy of the
    /// context's tables, the way large change sets are (the threshold lowered to one object).
    @Test(arguments: policies, ConflictKind.allCases)
    func onMainContextPreparedOffMainActor(policy: MergePolicy, kind: ConflictKind) async throws {
        try await onMainContext(policy: policy, kind: kind, preparedOffMainActor: true)
    }

    private func onMainContext(policy: MergePolicy, kind: ConflictKind, preparedOffMainActor: Bool) async throws {
        let directory = try TemporaryDirectory()
        let store = try await seededStore(directory)
        let main = store.mainContext
        main.mergePolicy = policy
        if preparedOffMainActor { main.preparedMergeThreshold = 1 }
        _ = try await main.fetch(Query<Article>())
        if kind == .deleteUpdate { try main.delete(Article.self, id: original.id) } else { try main.update(localEdit(original)) }

        try await remoteChange(kind, store)
        await main.mergeAccepted()   // the remote save was accepted: its merge is waiting in the mailbox
        #expect(main.preparationCount == (preparedOffMainActor ? 1 : 0), "\(policy) \(kind): merges prepared off the main actor")

        let outcome = expected(policy, kind)
        #expect(main.object(Article.self, id: original.id) == outcome.shown, "\(policy) \(kind): shown")
        if outcome.saveThrows {
            let error = try #require(throws: StrataError.self) { try main.save() }
            #expect(error.code == .conflict)
            #expect(error.objectID?.contains(original.id) == true)
            #expect(main.conflictingIDs == [original.id.databaseValue])
        } else {
            try main.save()
        }
        try await store.persist()
        #expect(try await store.fetch(Article.self, id: original.id) == outcome.stored, "\(policy) \(kind): stored")
        try await store.close()
    }

    @Test(arguments: policies, ConflictKind.allCases)
    func onWorkerContext(policy: MergePolicy, kind: ConflictKind) async throws {
        let directory = try TemporaryDirectory()
        let store = try await seededStore(directory)
        let worker = try await ConflictEdits.localWorker(store, policy: policy, kind: kind)

        try await remoteChange(kind, store)

        let outcome = expected(policy, kind)
        // The worker merges what the store accepted before its next operation.
        #expect(await worker.object(Article.self, id: original.id) == outcome.shown, "\(policy) \(kind): shown")
        if outcome.saveThrows {
            await #expect(throws: StrataError.self) { try await worker.save() }
            #expect(await worker.conflictingIDs == [original.id.databaseValue])
        } else {
            try await worker.save()
        }
        try await store.persist()
        #expect(try await store.fetch(Article.self, id: original.id) == outcome.stored, "\(policy) \(kind): stored")
    }

    private func seededStore(_ directory: TemporaryDirectory) async throws -> Store {
        let store = try await openStore(directory.path("s.sqlite"))
        var changes = ChangeSet()
        changes.insert(original)
        try store.submit(changes)
        try await store.persist()
        return store
    }

    /// Another worker saves a change to the same object.
    private func remoteChange(_ kind: ConflictKind, _ store: Store) async throws {
        let remote = store.makeWorkerContext(name: "remote")
        _ = try await remote.fetch(Query<Article>())
        if kind == .updateDelete {
            try await remote.delete(Article.self, id: original.id)
        } else {
            try await remote.update(remoteEdit(original))
        }
        try await remote.save()
    }
}
