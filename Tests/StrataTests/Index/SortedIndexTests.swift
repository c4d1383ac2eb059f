import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The snapshot order's in-memory index: its slots are always the live rows in the entity's
/// order (ties by key), however rows change between settles; and a query it answers (limit,
/// that order) returns what the query returns without it.
@MainActor
@Suite struct SortedIndexTests {
    private static let schema = try! SchemaRegistry([ListedArticle.self]).schema(for: ListedArticle.self)

    /// The live slots of `table` sorted by the reference order: published descending, id ascending.
    private func reference(_ table: ColumnTable) -> [Int] {
        let published = Self.schema.position(of: "published")!, id = Self.schema.primaryKeyIndex
        return table.liveSlots.sorted { a, b in
            let order = DatabaseValue.compare(table.value(at: a, published), table.value(at: b, published))
            if order != 0 { return order > 0 }
            return DatabaseValue.compare(table.value(at: a, id), table.value(at: b, id)) < 0
        }
    }

    /// Whether the index's ranks increase along its slots, as a query ordering matches by rank needs.
    private func ranksFollowSlots(_ index: SortedIndex) -> Bool {
        let ranks = index.slots.map { index.ranks[$0] }
        return zip(ranks, ranks.dropFirst()).allSatisfy { $0 < $1 }
    }

    /// Settles `index` and expects it to be the live rows in the reference order, ranked along
    /// its slots; `context` names the seed and the step for a failure.
    private func settleAndExpectOrdered(_ index: inout SortedIndex, in table: ColumnTable, _ context: String,
                                        sourceLocation: SourceLocation = #_sourceLocation) {
        index.settle(in: table)
        #expect(index.slots == reference(table), "\(context)", sourceLocation: sourceLocation)
        #expect(ranksFollowSlots(index), "\(context)", sourceLocation: sourceLocation)
    }

    @Test func theIndexIsTheLiveRowsInOrderAfterAnyChanges() throws {
        var (random, seed) = SeededRandom.forTest("theIndexIsTheLiveRowsInOrderAfterAnyChanges")
        let table = ColumnTable(schema: Self.schema)
        var index = try #require(try SortedIndex(schema: Self.schema))
        let published = try #require(Self.schema.position(of: "published"))
        func row(_ key: Int) -> [DatabaseValue] {
            // Few dates, so that ties (broken by key) are common; keys sort as text ("k-10" < "k-9").
            [.text("k-\(key)"), .integer(Int64(random.next(5))), .real(Double(random.next(30))), .integer(Int64(random.next(2)))]
        }
        for step in 0..<3_000 {
            let key = random.next(400)
            switch random.next(4) {
            case 0, 1:
                index.touch(table.upsert(row(key)))
            case 2:
                if let slot = table.remove(key: .text("k-\(key)")) { index.touch(slot) }
            default:
                if let slot = table.slot(of: .text("k-\(key)")) {
                    table.setValue(.real(Double(random.next(30))), at: slot, published)
                    index.touch(slot)
                }
            }
            if random.next(40) == 0 || step == 2_999 {
                settleAndExpectOrdered(&index, in: table, "seed \(seed), step \(step)")
            }
        }
    }

    /// What an import does: batches of new rows that sort together (newest first, so at the head;
    /// a few backdated ones at the tail; dates repeated across a batch), each batch settled at
    /// once, with some older rows changed between batches.
    @Test func batchesOfNewRowsThatSortTogetherAreSettledInPlace() throws {
        var (random, seed) = SeededRandom.forTest("batchesOfNewRowsThatSortTogetherAreSettledInPlace")
        let table = ColumnTable(schema: Self.schema)
        var index = try #require(try SortedIndex(schema: Self.schema))
        let published = try #require(Self.schema.position(of: "published"))
        var next = 0
        for batch in 0..<12 {
            for _ in 0..<(50 + random.next(200)) {
                let date: Int64 = random.next(10) == 0 ? -Int64(random.next(100)) : Int64(batch * 1_000 + random.next(20))
                let row: [DatabaseValue] = [.text("k-\(next)"), .integer(1), .integer(date), .integer(0)]
                index.touch(table.upsert(row))
                next += 1
            }
            for _ in 0..<random.next(5) {
                if let slot = table.slot(of: .text("k-\(random.next(next))")) {
                    table.setValue(.real(Double(random.next(12_000)) + 0.5), at: slot, published)
                    index.touch(slot)
                }
            }
            settleAndExpectOrdered(&index, in: table, "seed \(seed), batch \(batch)")
        }
    }

    /// An import among a few newest rows (P3's probes): each batch sorts into one gap, after the
    /// newest rows and before every older one. It is placed there, and only it and the shorter
    /// side of the gap are ranked again: the longer side keeps its ranks.
    @Test func newRowsInOneGapRankOnlyTheShorterSide() throws {
        var (random, seed) = SeededRandom.forTest("newRowsInOneGapRankOnlyTheShorterSide")
        let table = ColumnTable(schema: Self.schema)
        var index = try #require(try SortedIndex(schema: Self.schema))
        var next = 0
        func add(_ published: Int64) {
            index.touch(table.upsert([.text("k-\(next)"), .integer(1), .integer(published), .integer(0)]))
            next += 1
        }
        for _ in 0..<(1 + random.next(20)) { add(1_000_000 + Int64(random.next(50))) }   // the newest
        index.settle(in: table)
        for batch in 0..<10 {
            let before = Dictionary(uniqueKeysWithValues: index.slots.map { ($0, index.ranks[$0]) })
            let newest = index.slots.prefix { DatabaseValue.compare(table.value(at: $0, 2), .integer(1_000_000)) >= 0 }.count
            for _ in 0..<(1 + random.next(300)) { add(Int64(batch * 100 + random.next(5))) }   // ties broken by key
            let held = index.slots
            settleAndExpectOrdered(&index, in: table, "seed \(seed), batch \(batch)")
            // The rows after the gap are the longer side once they outnumber the newest.
            let longer = newest <= held.count - newest ? Array(held.dropFirst(newest)) : Array(held.prefix(newest))
            #expect(longer.allSatisfy { index.ranks[$0] == before[$0] }, "seed \(seed), batch \(batch): the longer side was ranked again")
        }
        #expect(index.slots.first.map { index.ranks[$0] < 0 } == true, "no batch was ranked below the head")
    }

    @Test func anIndexBuiltOverABlockIsItsRowsInOrder() throws {
        var (random, seed) = SeededRandom.forTest("anIndexBuiltOverABlockIsItsRowsInOrder")
        var block = ColumnBlock(schema: Self.schema)
        for key in 0..<500 {
            try block.append([.text("k-\(key)"), .integer(1), .real(Double(random.next(40))), .integer(0)] as [DatabaseValue])
        }
        let index = try #require(try SortedIndex.built(over: block, schema: Self.schema))
        let table = ColumnTable(schema: Self.schema)
        table.adopt(block)
        #expect(index.slots == reference(table), "seed \(seed)")
    }

    /// A store of `articles`, saved in one change set and merged into its main context, which
    /// loaded its resident entities first.
    private func openMerged(in directory: TemporaryDirectory, _ articles: [ListedArticle]) async throws -> (Store, MainContext) {
        let store = try await Store.open(at: directory.path("s.sqlite"), entities: [ListedArticle.self])
        let main = store.mainContext
        try await main.loadResidentEntities()
        var changes = ChangeSet()
        for article in articles { changes.insert(article) }
        try await store.submit(changes).committed()
        await main.mergeAccepted()
        return (store, main)
    }

    /// Queries in the snapshot order — walked from the index's start (a limit, no narrowing
    /// filter) or ordered by the index's ranks (keys pinned, or no limit) — return the matches
    /// ordered here by their values, windowed — with unsaved edits, merged saves and deletions in
    /// between.
    @Test func aQueryWalkingTheOrderEqualsTheQueryOrderingEveryMatch() async throws {
        var (random, seed) = SeededRandom.forTest("aQueryWalkingTheOrderEqualsTheQueryOrderingEveryMatch")
        let directory = try TemporaryDirectory()
        func article(_ index: Int) -> ListedArticle {
            ListedArticle(id: "a-\(index)", feedID: Int64(random.next(6)),
                          published: Date(timeIntervalSinceReferenceDate: Double(random.next(200))), isRead: random.next(3) == 0)
        }
        let (store, main) = try await openMerged(in: directory, (0..<1_500).map(article))
        let newest = [Attribute("published").descending]
        let filters: [Filter] = [.all, Attribute("isRead") == false, Attribute("feedID") > 2,
                                 Attribute("feedID") == 1 || Attribute("isRead") == true,
                                 Attribute("id").in((0..<300).map { "a-\($0 * 7)" })]
        // The reference order, from the values: published descending, then id byte by byte.
        func newestFirst(_ a: ListedArticle, _ b: ListedArticle) -> Bool {
            a.published != b.published ? a.published > b.published : Array(a.id.utf8).lexicographicallyPrecedes(b.id.utf8)
        }
        func check(_ round: Int) throws {
            for filter in filters {
                let limit = [1, 7, 50, 400][random.next(4)], offset = [0, 0, 3, 60][random.next(4)]
                let windowed = try main.objects(matching: Query<ListedArticle>(where: filter, sortedBy: newest, limit: limit, offset: offset))
                let every = try main.objects(matching: Query<ListedArticle>(where: filter, sortedBy: newest))
                let reference = try main.objects(matching: Query<ListedArticle>(where: filter)).sorted(by: newestFirst)
                #expect(every == reference, "seed \(seed), round \(round), \(filter), no limit")
                let expected = Array(reference.dropFirst(offset).prefix(limit))
                #expect(windowed == expected, "seed \(seed), round \(round), \(filter) limit \(limit) offset \(offset)")
                let ids = try main.ids(matching: Query<ListedArticle>(where: filter, sortedBy: newest, limit: limit, offset: offset))
                #expect(ids == expected.map(\.id), "seed \(seed), round \(round)")
            }
        }
        for round in 0..<30 {
            // Some rounds import articles newer than any held first, checked at once: placed at
            // the head of the order with ranks below the first's (negative), which queries
            // ordering matches by rank must read.
            if round % 3 == 1 {
                var newer = ChangeSet()
                for index in 0..<(5 + random.next(20)) {
                    newer.insert(ListedArticle(id: "new-\(round)-\(index)", feedID: Int64(random.next(6)),
                                               published: Date(timeIntervalSinceReferenceDate: Double(1_000 + round * 10 + random.next(3))),
                                               isRead: random.next(3) == 0))
                }
                try await store.submit(newer).committed()
                await main.mergeAccepted()
                try check(round)
            }
            // Unsaved edits on the main context, and saves merged from the store.
            for _ in 0..<random.next(5) {
                var edited = article(random.next(1_600))
                edited.isRead.toggle()
                if main.object(ListedArticle.self, id: edited.id) != nil { try main.update(edited) } else { try main.insert(edited) }
            }
            if random.next(3) == 0 {
                do {
                    // Awaited, so that a refusal at commit is told here (else `close()` reports it).
                    try await main.save()?.committed()
                } catch let error as StrataError where error.code == .objectNotFound {
                    // An update of an object a failing change set below showed for a moment (the
                    // contexts show accepted saves until their failure is known, then undo them):
                    // the store refuses it, at the save or at its commit, as it should; the
                    // edits go.
                    main.rollback()
                }
            }
            var merged = ChangeSet()
            // Every tenth round a change set large enough to be merged off the main actor.
            for _ in 0..<(round % 10 == 9 ? 1_200 : random.next(40)) { merged.update(article(random.next(1_500))) }
            if random.next(2) == 0 { merged.delete(ListedArticle.self, id: "a-\(random.next(1_500))") }
            if !merged.isEmpty {
                _ = try? await store.submit(merged).committed()
                await main.mergeAccepted()
            }
            // Bulk updates patch the sort attribute in place.
            if random.next(2) == 0 {
                let ids = (0..<random.next(30)).map { _ in "a-\(random.next(1_500))" }
                let date = Date(timeIntervalSinceReferenceDate: Double(random.next(200)))
                _ = try? await store.updateAll(ListedArticle.self, ids: ids, set: ["published": date]).committed()
                await main.mergeAccepted()
            }
            try check(round)
        }
        try await store.close()
    }

    /// A change set merged off the main actor arrives with the order placed: the main actor
    /// adopts it and has nothing left to place.
    @Test func aPreparedMergeArrivesSettled() async throws {
        var (random, seed) = SeededRandom.forTest("aPreparedMergeArrivesSettled")
        let directory = try TemporaryDirectory()
        func article(_ index: Int) -> ListedArticle {
            ListedArticle(id: "a-\(index)", feedID: Int64(random.next(6)),
                          published: Date(timeIntervalSinceReferenceDate: Double(random.next(500))), isRead: false)
        }
        let (store, main) = try await openMerged(in: directory, (0..<1_500).map(article))
        let newest = [Attribute("published").descending]
        _ = try main.ids(matching: Query<ListedArticle>(sortedBy: newest, limit: 1))   // settles what was merged so far
        let before = main.preparationCount
        var updates = ChangeSet()
        for index in 0..<1_200 { updates.update(article(index)) }
        try await store.submit(updates).committed()
        await main.mergeAccepted()
        #expect(main.preparationCount == before + 1, "seed \(seed): merged off the main actor")
        #expect(try main.graph.table(ListedArticle.self).ordered?.isSettled == true, "seed \(seed)")
        let every = try main.ids(matching: Query<ListedArticle>(sortedBy: newest))
        #expect(try main.ids(matching: Query<ListedArticle>(sortedBy: newest, limit: 20)) == Array(every.prefix(20)), "seed \(seed)")
        try await store.close()
    }
}
