import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A note whose title and body are in full text, filed in a folder (an in-memory hash index).
private struct SearchNote: Entity, Equatable {
    var id: Int64
    var folder: Int64
    var title: String
    var body: String?

    static let fullTextAttributes = ["title", "body"]
    static let indexes = [EntityIndex(["folder"])]
}

/// The main context answers `.matches` from its full-text index (`FullTextIndex`, kept by every
/// way the context changes); these tests hold its answers to FTS5's, through `store.ids`, for
/// the same queries on the same data.
@MainActor
@Suite struct MainContextFullTextTests {
    /// Words with what unicode61 folds (case, Latin diacritics, precomposed and combining) and
    /// what it does not (ß, Greek accents, CJK runs), digits, and apostrophes and hyphens that
    /// split tokens.
    static let words = ["meeting", "meetings", "Meet", "notes", "NOTES", "note", "café", "Cafe", "cafe\u{301}", "naïve",
                        "naive", "straße", "STRASSE", "Ὀδυσσεύς", "οδυσσευς", "東京", "über", "Uber", "x-ray", "don't",
                        "42", "a1b2", "plan", "planning", "planet"]
    static let separators = [" ", ", ", ". ", " - ", "\n", "/", "…", "  "]

    private static func text(_ random: inout SeededRandom, words count: Int) -> String {
        (0..<count).map { index in
            (index == 0 ? "" : separators[random.next(separators.count)]) + words[random.next(words.count)]
        }.joined()
    }

    private static func note(_ id: Int64, _ random: inout SeededRandom) -> SearchNote {
        SearchNote(id: id, folder: Int64(random.next(4)), title: text(&random, words: 1 + random.next(3)),
                   body: random.next(5) == 0 ? nil : text(&random, words: random.next(8)))
    }

    /// Queries as a user types them: one word, a prefix, two words, punctuation, nothing; alone,
    /// combined with a folder, negated, or'ed.
    private static func filters(_ random: inout SeededRandom) -> [Filter] {
        func word() -> String { words[random.next(words.count)] }
        func prefix() -> String { String(word().prefix(1 + random.next(3))) + "*" }
        var texts = [word(), prefix(), word() + " " + word(), word() + " " + prefix(), "\"" + word() + "\"",
                     word().uppercased(), "-" + word() + "!", ""]
        texts.append(word() + ", " + word() + "*")
        var filters = texts.map(Filter.matches)
        let folder = Int64(random.next(4))
        filters.append(.matches(prefix()) && Attribute("folder") == folder)
        filters.append(Attribute("folder") != folder && .matches(word()) && .matches(prefix()))
        filters.append(!.matches(word()))
        filters.append(.matches(word()) || Attribute("folder") == folder)
        return filters
    }

    /// Every filter gives the main context the IDs FTS5 gives, by ID and by title with a window.
    private func expectSameAnswers(_ main: MainContext, _ store: Store, _ random: inout SeededRandom, _ context: String) async throws {
        for filter in Self.filters(&random) {
            let byID = Query<SearchNote>(where: filter, sortedBy: [SortKey("id")])
            let inMemory = try main.ids(matching: byID)
            let fts5 = try await store.ids(byID)
            #expect(inMemory == fts5, "\(context): \(filter)")
            let window = Query<SearchNote>(where: filter, sortedBy: [SortKey("title", ascending: false), SortKey("id")],
                                           limit: 5, offset: 1)
            #expect(try main.ids(matching: window) == (try await store.ids(window)), "\(context): window of \(filter)")
            #expect(try main.count(matching: byID) == fts5.count, "\(context): count of \(filter)")
        }
    }

    @Test(.hangWatchdog)
    func answersAsFTS5ThroughInsertsUpdatesDeletesAndBulkPatches() async throws {
        var (random, seed) = SeededRandom.forTest(#function)
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("notes.sqlite"), entities: [SearchNote.self])
        let main = store.mainContext
        // Merges of 40 and more are prepared off the main actor, smaller ones run in place.
        main.preparedMergeThreshold = 40
        let worker = store.makeWorkerContext(name: "import")
        var nextID: Int64 = 0
        var held: [Int64] = []

        for step in 0..<24 {
            let context = "seed \(seed), step \(step)"
            switch step % 4 {
            case 0:   // a worker inserts, updates and deletes, in one change set of varying size
                let inserts = random.next(2) == 0 ? 60 : 8
                let fresh = (0..<inserts).map { _ in nextID += 1; return Self.note(nextID, &random) }
                let updated = held.isEmpty ? [] : (0..<5).map { _ in Self.note(held[random.next(held.count)], &random) }
                let deleted = held.isEmpty ? nil : held[random.next(held.count)]
                _ = try await worker.fetch(Query<SearchNote>())   // a worker edits what it holds
                try await worker.perform { worker in
                    for note in fresh { try worker.insert(note) }
                    for note in updated { try worker.update(note) }
                    if let deleted { try worker.delete(SearchNote.self, id: deleted) }
                    try worker.save()
                }
                held += fresh.map(\.id)
                held.removeAll { $0 == deleted }
                await main.mergeAccepted()
            case 1:   // the main context saves its own edits; unsaved ones are searched too
                let edited = Self.note(held[random.next(held.count)], &random)
                try main.update(edited)
                nextID += 1
                try main.insert(Self.note(nextID, &random))
                held.append(nextID)
                try await expectSameAnswersWithUnsaved(main, store, &random, context)
                try await main.save()?.committed()
            case 2:   // a bulk patch of the full-text attributes by IDs and one of another by filter
                let ids = (0..<(1 + random.next(50))).map { _ in held[random.next(held.count)] }
                try await main.updateAll(SearchNote.self, ids: ids, set: ["title": Self.text(&random, words: 2)])
                try await main.updateAll(SearchNote.self, where: .matches(Self.words[random.next(Self.words.count)]),
                                         set: ["body": Self.text(&random, words: 3), "folder": Int64(random.next(4))])
            default:  // bulk deletions by filter, through the full-text index, then by ID
                let word = Self.words[random.next(Self.words.count)]
                try await main.deleteAll(SearchNote.self, where: .matches(word) && Attribute("folder") == Int64(random.next(4)))
                try await main.deleteAll(SearchNote.self, ids: [held[random.next(held.count)]])
                held = try await store.ids(Query<SearchNote>())
            }
            try await expectSameAnswers(main, store, &random, context)
        }
        #expect(main.preparationCount > 0, "seed \(seed): some merges were prepared off the main actor")
        try await store.close()
    }

    /// With unsaved edits in the context, the store does not have them: compare with what the
    /// context shows evaluated row by row (the reference `ResolvedFilter` evaluator).
    private func expectSameAnswersWithUnsaved(_ main: MainContext, _ store: Store, _ random: inout SeededRandom,
                                              _ context: String) async throws {
        let table = try main.graph.table(SearchNote.self)
        let shown = table.heldKeys.compactMap(table.visibleRow) + table.edits.values.compactMap { edit in
            edit.kind == .insert ? edit.row : nil
        }
        for filter in Self.filters(&random) {
            let resolved = try ResolvedFilter(filter, schema: table.schema)
            let expected = shown.filter(resolved.matches).compactMap { row -> Int64? in
                if case .integer(let id) = row[table.schema.primaryKeyIndex] { return id }
                return nil
            }.sorted()
            #expect(try main.ids(matching: Query<SearchNote>(where: filter, sortedBy: [SortKey("id")])) == expected,
                    "\(context), unsaved edits: \(filter)")
        }
    }

    /// A warm start builds the index off the main actor with the others; a cold start's fetch of
    /// more than the preparation threshold too. Both answer as FTS5.
    @Test(.hangWatchdog)
    func answersAsFTS5AfterAWarmAndAColdStart() async throws {
        var (random, seed) = SeededRandom.forTest(#function)
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite"), snapshot = directory.path("notes.snapshot")
        let count = MainContext.preparedIndexThreshold + 200
        do {
            let store = try await openStore(path, entities: [SearchNote.self])
            let worker = store.makeWorkerContext()
            let notes = (1...Int64(count)).map { Self.note($0, &random) }
            try await worker.perform { worker in
                for note in notes { try worker.insert(note) }
                try worker.save()
            }
            try await store.persist()
            _ = try await store.mainContext.fetch(Query<SearchNote>())
            _ = try await store.mainContext.writeSnapshot(to: snapshot)
            try await store.close()
        }
        let cold = try await openStore(path, entities: [SearchNote.self])
        #expect(try await cold.mainContext.fetch(Query<SearchNote>()).count == count)
        try await expectSameAnswers(cold.mainContext, cold, &random, "seed \(seed), cold start")
        try await cold.close()

        let warm = try await Store.openWarm(at: path, snapshot: snapshot, entities: [SearchNote.self])
        #expect(warm.outcome == .used)
        #expect(warm.mainContext.registeredCount(SearchNote.self) == count)
        try await expectSameAnswers(warm.mainContext, warm.store, &random, "seed \(seed), warm start")
        try await warm.store.close()
    }
}
