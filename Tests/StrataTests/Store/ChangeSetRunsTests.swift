import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A change set keeps its runs of one entity's operations as operations are appended
/// (`ChangeSet.entityRuns`), instead of each merging context finding them again: they must be
/// what a scan of the operations finds, whatever was appended and how.
@Suite struct ChangeSetRunsTests {
    /// The runs, found by scanning the operations.
    private static func scannedRuns(_ changes: ChangeSet) -> [String] {
        var runs: [String] = []
        var start = 0
        while start < changes.operations.count {
            let entity = changes.operations[start].entityName
            var end = start + 1
            while end < changes.operations.count, changes.operations[end].entityName == entity { end += 1 }
            runs.append("\(entity) \(start)..<\(end)")
            start = end
        }
        return runs
    }

    private static func keptRuns(_ changes: ChangeSet) -> [String] {
        changes.entityRuns.map { "\($0.entity) \($0.range.lowerBound)..<\($0.range.upperBound)" }
    }

    /// Appends one random operation of a random kind and entity.
    private static func appendRandom(to changes: inout ChangeSet, _ random: inout SeededRandom, _ step: Int) {
        let articleID = "article-\(random.next(20))"
        switch random.next(7) {
        case 0: changes.insert(Article.make(step))
        case 1: changes.upsert(Article.make(random.next(20)))
        case 2: changes.delete(Article.self, id: articleID)
        case 3: changes.updateAll(Article.self, ids: [articleID], set: ["isRead": true])
        case 4: changes.upsert(Feed(id: Int64(random.next(5)), name: "feed"))
        case 5: changes.deleteAll(Feed.self, ids: [Int64(random.next(5))])
        default: changes.deleteAll(Article.self, where: .all)
        }
    }

    @Test func keptRunsAreTheRunsOfTheOperations() {
        var (random, seed) = SeededRandom.forTest("keptRunsAreTheRunsOfTheOperations")
        for round in 0..<200 {
            var changes = ChangeSet()
            for step in 0..<random.next(30) { Self.appendRandom(to: &changes, &random, step) }
            // Another change set appended whole, its first run joining the last one here or not.
            var other = ChangeSet()
            for step in 0..<random.next(10) { Self.appendRandom(to: &other, &random, step) }
            changes.append(contentsOf: other)
            #expect(Self.keptRuns(changes) == Self.scannedRuns(changes), "seed \(seed), round \(round)")
            #expect(changes.entityRuns.reduce(0) { $0 + $1.range.count } == changes.count, "seed \(seed), round \(round)")
        }
    }

    @Test func runsOfOneEntityJoinAcrossAppendedChangeSets() {
        var first = ChangeSet(), second = ChangeSet()
        first.insert(Article.make(1))
        first.upsert(Feed(id: 1, name: "feed"))
        second.upsert(Feed(id: 2, name: "feed"))
        second.insert(Article.make(2))
        first.append(contentsOf: second)
        #expect(Self.keptRuns(first) == ["Article 0..<1", "Feed 1..<3", "Article 3..<4"])
    }
}
