import Foundation
@testable import Strata
import StrataTestSupport
import Testing

@Suite struct PipelineTests {
    // MARK: Coalescing

    @Test func consecutiveChangeSetsCoalesceIntoOneTransactionWithOneSavepointEach() async throws {
        let directory = try TemporaryDirectory()
        let log = StatementLog()
        let store = try await openStore(directory.path("store.sqlite"), entities: pipelineEntities, log: log)
        log.clear()

        let gate = QueueGate()
        async let held = store.read { _ in gate.hold() }
        defer { gate.release() }
        try #require(await waitOff(gate.entered), "the store's queue never ran the blocking read")

        var submissions: [Submission] = []
        for index in 0..<100 {
            var changes = ChangeSet()
            changes.insert(PipelineItem.make(index))
            submissions.append(try store.submit(changes))   // must return although the queue is blocked
        }
        #expect(store.pendingCount == 100)
        #expect(submissions.map(\.sequence) == Array(submissions[0].sequence..<submissions[0].sequence + 100))
        #expect(log.count(where: isBegin) == 0, "nothing may reach SQLite while the queue is blocked")

        gate.release()
        #expect(try await held, "the blocking read was not released in time")
        try await store.persist()
        for submission in submissions { try await submission.committed() }

        // From the pipeline's transaction on: the blocking read's own read transaction came first.
        let statements = Array(log.statements.drop { !isBegin($0) })
        #expect(statements.filter(isBegin).count == 1, "\(statements.filter { !$0.hasPrefix("INSERT") })")
        #expect(statements.filter(isCommit).count == 1)
        #expect(statements.filter(isSavepoint).count == 100)
        #expect(statements.filter(isRelease).count == 100)
        #expect(statements.filter(isSavepointRollback).isEmpty)
        // The savepoints all sit inside the one transaction.
        let begin = try #require(statements.firstIndex(where: isBegin))
        let commit = try #require(statements.firstIndex(where: isCommit))
        #expect(statements.indices.filter { isSavepoint(statements[$0]) }.allSatisfy { $0 > begin && $0 < commit })
        #expect(store.pendingCount == 0)
        #expect(try await store.count(Query<PipelineItem>()) == 100)
        #expect(try await store.fetch(Query<PipelineItem>()) == (0..<100).map { PipelineItem.make($0) })
    }

    // MARK: Permanent failures

    @Test func permanentFailureFailsItsChangeSetAloneWithinOneTransaction() async throws {
        let directory = try TemporaryDirectory()
        let log = StatementLog()
        let store = try await openStore(directory.path("store.sqlite"), entities: pipelineEntities, log: log)
        var seed = ChangeSet()
        seed.insert(PipelineContact(id: 1, email: "ada@example.com", name: "Ada"))
        try await store.submit(seed).committed()
        log.clear()

        let gate = QueueGate()
        async let held = store.read { _ in gate.hold() }
        defer { gate.release() }
        try #require(await waitOff(gate.entered))

        var before = ChangeSet()
        before.insert(PipelineContact(id: 2, email: "bob@example.com", name: "Bob"))
        var uniqueViolation = ChangeSet()
        uniqueViolation.insert(PipelineContact(id: 10, email: "carol@example.com", name: "Carol"))
        uniqueViolation.insert(PipelineContact(id: 3, email: "ada@example.com", name: "Impostor"))
        var duplicateID = ChangeSet()
        duplicateID.insert(PipelineContact(id: 1, email: "other@example.com", name: "Ada again"))
        var missingUpdate = ChangeSet()
        missingUpdate.insert(PipelineContact(id: 11, email: "dan@example.com", name: "Dan"))
        missingUpdate.update(PipelineContact(id: 99, email: "ghost@example.com", name: "Ghost"))
        var after = ChangeSet()
        after.upsert(PipelineContact(id: 4, email: "eve@example.com", name: "Eve"))
        after.update(PipelineContact(id: 1, email: "ada@example.org", name: "Ada L."))

        let submissions = try [before, uniqueViolation, duplicateID, missingUpdate, after].map { try store.submit($0) }
        gate.release()
        #expect(try await held)

        try await submissions[0].committed()
        let unique = await strataError { try await submissions[1].committed() }
        #expect(unique?.code == .constraint)
        #expect(unique?.entity == "PipelineContact")
        #expect(unique?.objectID == "3")
        let duplicate = await strataError { try await submissions[2].committed() }
        #expect(duplicate?.code == .constraint)
        #expect(duplicate?.entity == "PipelineContact")
        #expect(duplicate?.objectID == "1")
        let missing = await strataError { try await submissions[3].committed() }
        #expect(missing?.code == .objectNotFound)
        #expect(missing?.entity == "PipelineContact")
        #expect(missing?.objectID == "99")
        try await submissions[4].committed()

        // Every failure was reported to its submitter, so there is nothing left for persist().
        try await store.persist()
        #expect(store.pendingCount == 0)

        // From the pipeline's transaction on: the blocking read's own read transaction came first.
        let statements = Array(log.statements.drop { !isBegin($0) })
        #expect(statements.filter(isBegin).count == 1, "the five change sets must share one transaction")
        #expect(statements.filter(isCommit).count == 1)
        #expect(statements.filter(isSavepoint).count == 5)
        #expect(statements.filter(isSavepointRollback).count == 3)

        // Failed change sets left nothing behind, not even their other operations (ids 10, 11).
        let contacts = try await store.fetch(Query<PipelineContact>())
        #expect(contacts == [
            PipelineContact(id: 1, email: "ada@example.org", name: "Ada L."),
            PipelineContact(id: 2, email: "bob@example.com", name: "Bob"),
            PipelineContact(id: 4, email: "eve@example.com", name: "Eve"),
        ])
    }

    @Test func persistReportsAnUnreportedPermanentFailureOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("store.sqlite"), entities: pipelineEntities)
        var seed = ChangeSet()
        seed.insert(PipelineContact(id: 1, email: "ada@example.com", name: "Ada"))
        try await store.submit(seed).committed()

        let failures = store.failures()
        let gate = QueueGate()
        async let held = store.read { _ in gate.hold() }
        defer { gate.release() }
        try #require(await waitOff(gate.entered))
        var good = ChangeSet()
        good.insert(PipelineContact(id: 2, email: "bob@example.com", name: "Bob"))
        var bad = ChangeSet()
        bad.insert(PipelineContact(id: 1, email: "dup@example.com", name: "Duplicate"))
        var alsoGood = ChangeSet()
        alsoGood.insert(PipelineContact(id: 3, email: "carol@example.com", name: "Carol"))
        let first = try store.submit(good)
        let failing = try store.submit(bad)
        let last = try store.submit(alsoGood)
        gate.release()
        #expect(try await held)

        let reported = await strataError { try await store.persist() }
        #expect(reported?.code == .constraint)
        #expect(reported?.objectID == "1")
        // Reported once: the next persist() has nothing to say.
        try await store.persist()
        try await first.committed()
        try await last.committed()
        // The submitter still learns that its change set failed: committed() must not claim success.
        let own = await strataError { try await failing.committed() }
        #expect(own?.code == .constraint, "a failed change set's committed() returned normally")
        let again = await strataError { try await failing.committed() }
        #expect(again?.code == .constraint)

        // The failure was also published.
        var iterator = failures.makeAsyncIterator()
        let published = await iterator.next()
        #expect(published?.code == .constraint)
        #expect(published?.objectID == "1")
        #expect(try await store.fetch(Query<PipelineContact>()).map(\.id) == [1, 2, 3])
        #expect(try await store.fetch(PipelineContact.self, id: 1)?.name == "Ada")
    }

    @Test func submitRejectsInvalidChangeSetsWithoutAcceptingThem() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("store.sqlite"), entities: pipelineEntities)
        var unknownAttribute = ChangeSet()
        unknownAttribute.updateAll(PipelineItem.self, ids: ["item-00001"], set: ["colour": "red"])
        #expect(await strataError { try store.submit(unknownAttribute) }?.code == .unknownAttribute)

        var wrongType = ChangeSet()
        wrongType.updateAll(PipelineItem.self, where: .all, set: ["label": 3])
        #expect(await strataError { try store.submit(wrongType) }?.code == .invalidValue)

        var primaryKey = ChangeSet()
        primaryKey.updateAll(PipelineItem.self, where: .all, set: ["id": "x"])
        #expect(await strataError { try store.submit(primaryKey) }?.code == .invalidValue)

        var nullIntoRequired = ChangeSet()
        nullIntoRequired.updateAll(PipelineItem.self, where: .all, set: ["group": Int64?.none])
        #expect(await strataError { try store.submit(nullIntoRequired) }?.code == .invalidValue)

        // A fraction cannot go into an integer attribute: SQLite would keep it as REAL, and every
        // later fetch of the row would fail to decode it.
        var fraction = ChangeSet()
        fraction.updateAll(PipelineItem.self, where: .all, set: ["group": 2.5])
        #expect(await strataError { try store.submit(fraction) }?.code == .invalidValue)

        var badFilter = ChangeSet()
        badFilter.deleteAll(PipelineItem.self, where: Attribute("nope") == 1)
        #expect(await strataError { try store.submit(badFilter) }?.code == .unknownAttribute)

        var unknownEntity = ChangeSet()
        unknownEntity.insert(Article.make(1))
        #expect(await strataError { try store.submit(unknownEntity) }?.code == .unknownEntity)

        #expect(store.pendingCount == 0)
        try await store.persist()
        #expect(try await store.count(Query<PipelineItem>()) == 0)
    }

    // MARK: Read-your-writes before commit

    @Test func fetchesSeePendingChangeSetsWhileAnotherConnectionHoldsTheWriteLock() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try await openStore(path) { configuration in
            configuration.busyTimeout = 0.2
            configuration.initialRetryDelay = 0.02
            configuration.maximumRetryDelay = 0.1
        }
        var model: [String: Article] = [:]
        var seed = ChangeSet()
        for index in 0..<40 {
            let article = Article.make(index)
            model[article.id] = article
            seed.insert(article)
        }
        try await store.submit(seed).committed()

        let other = try await openStore(path)
        let failures = store.failures()
        let gate = QueueGate()
        let holder = Task { try await other.write { _ in gate.hold() } }
        defer { gate.release() }
        try #require(await waitOff(gate.entered), "the second store never took the write lock")

        // 1: inserts into feed 3 (unread), one with a searchable title.
        var inserts = ChangeSet()
        for index in 100..<105 {
            var article = Article.make(index, feed: 3)
            if index == 102 { article.title = "Pending headline" }
            inserts.insert(article)
            model[article.id] = article
        }
        // 2: updates that move rows out of and within "feed 3, unread".
        var updates = ChangeSet()
        var three = try #require(model["article-3"])
        three.isRead = true
        three.title = "Read now"
        var thirteen = try #require(model["article-13"])
        thirteen.published = Date(timeIntervalSinceReferenceDate: 1_000_000)
        updates.update(three)
        updates.update(thirteen)
        model[three.id] = three
        model[thirteen.id] = thirteen
        // 3: a delete and an upsert that moves a row into feed 3.
        var mixed = ChangeSet()
        mixed.delete(Article.self, id: "article-23")
        model["article-23"] = nil
        var seven = try #require(model["article-7"])
        seven.feedID = 3
        mixed.upsert(seven)
        model[seven.id] = seven
        // 4: bulk update by IDs (one of them does not exist).
        var bulkByIDs = ChangeSet()
        bulkByIDs.updateAll(Article.self, ids: ["article-33", "article-104", "article-999"], set: ["isRead": true])
        for id in ["article-33", "article-104"] { model[id]?.isRead = true }
        // 5: bulk update by filter that moves feed 5 into feed 3, then one that depends on it.
        var bulkByFilter = ChangeSet()
        bulkByFilter.updateAll(Article.self, where: Attribute("feedID") == 5, set: ["feedID": 3])
        bulkByFilter.updateAll(Article.self, where: Attribute("feedID") == 3 && Attribute("isRead") == true,
                               set: ["isStarred": true])
        for (id, article) in model where article.feedID == 5 { model[id]?.feedID = 3 }
        for (id, article) in model where article.feedID == 3 && article.isRead { model[id]?.isStarred = true }
        // 6: bulk delete by filter.
        var bulkDelete = ChangeSet()
        bulkDelete.deleteAll(Article.self, where: Attribute("feedID") == 9 && Attribute("summary").isNotNull)
        for (id, article) in model where article.feedID == 9 && article.summary != nil { model[id] = nil }

        let changeSets = [inserts, updates, mixed, bulkByIDs, bulkByFilter, bulkDelete]
        let submissions = try changeSets.map { try store.submit($0) }

        // The attempt that includes them fails with .busy, a transient failure.
        let busy = await strataError { try await submissions[0].committed() }
        #expect(busy?.code == .busy)
        #expect(busy?.isTransient == true)

        func expected(_ isIncluded: (Article) -> Bool, _ areInIncreasingOrder: (Article, Article) -> Bool,
                      limit: Int? = nil) -> [Article] {
            let sorted = model.values.filter(isIncluded).sorted(by: areInIncreasingOrder)
            return limit.map { Array(sorted.prefix($0)) } ?? sorted
        }
        func newestFirst(_ a: Article, _ b: Article) -> Bool {
            a.published != b.published ? a.published > b.published : a.id < b.id
        }

        // Everything the lock holder keeps from committing is visible to every kind of read.
        #expect(try await store.fetch(Query<Article>()) == expected({ _ in true }, { $0.id < $1.id }))
        let unreadInThree = Query<Article>(where: Attribute("feedID") == 3 && Attribute("isRead") == false,
                                           sortedBy: [Attribute("published").descending], limit: 4)
        let unreadExpected = expected({ $0.feedID == 3 && !$0.isRead }, newestFirst, limit: 4)
        #expect(try await store.fetch(unreadInThree) == unreadExpected)
        #expect(unreadExpected.first?.id == "article-13", "the test's own model went wrong")
        #expect(try await store.ids(unreadInThree) == unreadExpected.map(\.id))
        #expect(try await store.count(Query<Article>(where: Attribute("feedID") == 3))
                == model.values.filter { $0.feedID == 3 }.count)
        #expect(try await store.count(unreadInThree) == 4)
        let starred = Query<Article>(where: Attribute("isStarred") == true, sortedBy: [Attribute("title").ascending])
        #expect(try await store.ids(starred)
                == expected({ $0.isStarred }, { $0.title != $1.title ? $0.title < $1.title : $0.id < $1.id }).map(\.id))
        #expect(try await store.count(Query<Article>(where: Attribute("feedID") == 5)) == 0)
        #expect(try await store.count(Query<Article>(where: Attribute("feedID") == 9))
                == model.values.filter { $0.feedID == 9 }.count)
        // Full text over a title that only exists in a pending change set, and one that is gone.
        #expect(try await store.ids(Query<Article>(where: .matches("headline"))) == ["article-102"])
        #expect(try await store.ids(Query<Article>(where: .matches("read now"))) == ["article-3"])
        #expect(try await store.ids(Query<Article>(where: .matches("title 3"))).isEmpty)
        #expect(try await store.fetch(Article.self, id: "article-23") == nil)
        #expect(try await store.fetch(Article.self, id: "article-102") == model["article-102"])
        #expect(try await store.fetch(Article.self, id: "article-3") == model["article-3"])
        #expect(model["article-3"]?.isStarred == true && model["article-3"]?.title == "Read now")
        #expect(try await store.fetch(Article.self, ids: ["article-7", "article-104", "article-23"])
                == [model["article-104"], model["article-7"]].compactMap { $0 })

        // persist() reports the transient failure and the changes stay pending.
        let persisted = await strataError { try await store.persist() }
        #expect(persisted?.code == .busy)
        #expect(store.pendingCount == changeSets.count)
        var iterator = failures.makeAsyncIterator()
        #expect(await iterator.next()?.code == .busy)
        // Direct access refuses to run ahead of the pending changes.
        #expect(await strataError { _ = try await store.read { _ in 0 } }?.code == .busy)

        // Once the lock is released the retries (on their own, with backoff) commit everything.
        gate.release()
        #expect(try await holder.value)
        try await persistAfterLockReleased(store)
        #expect(store.pendingCount == 0)
        for submission in submissions { try await submission.committed() }
        #expect(try await store.fetch(unreadInThree) == unreadExpected)

        let reopened = try await openStore(path)
        #expect(try await reopened.fetch(Query<Article>()) == expected({ _ in true }, { $0.id < $1.id }))
        #expect(try await reopened.ids(Query<Article>(where: .matches("headline"))) == ["article-102"])
        #expect(try await reopened.ids(Query<Article>(where: .matches("title 3"))).isEmpty)
    }

    @Test func canonicallyEquivalentButDistinctIDsStayDistinctInThePendingOverlay() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try await openStore(path, entities: pipelineEntities) { configuration in
            configuration.busyTimeout = 0
            configuration.initialRetryDelay = 0.05
            configuration.maximumRetryDelay = 0.2
        }
        let composed = PipelineItem(id: "caf\u{E9}", group: 1, score: 1, label: "composed", isDone: false)
        let decomposed = PipelineItem(id: "cafe\u{301}", group: 2, score: 2, label: "decomposed", isDone: false)
        let other = try await openStore(path, entities: pipelineEntities)
        let gate = QueueGate()
        let holder = Task { try await other.write { _ in gate.hold() } }
        defer { gate.release() }
        try #require(await waitOff(gate.entered))

        var changes = ChangeSet()
        changes.insert(composed)
        changes.insert(decomposed)
        try store.submit(changes)
        // Pending: SQLite will hold two rows with byte-distinct keys, sorted byte-wise ("e" < "\u{E9}");
        // the overlay must agree.
        let pending = try await store.fetch(Query<PipelineItem>())
        #expect(pending.map(\.label) == ["decomposed", "composed"])
        #expect(pending.map { Array($0.id.utf8) } == [Array(decomposed.id.utf8), Array(composed.id.utf8)])
        #expect(try await store.fetch(PipelineItem.self, id: composed.id)?.label == "composed")
        #expect(try await store.fetch(PipelineItem.self, id: decomposed.id)?.label == "decomposed")
        gate.release()
        #expect(try await holder.value)
        try await persistAfterLockReleased(store)
        let committed = try await store.fetch(Query<PipelineItem>())
        #expect(committed.map(\.label) == ["decomposed", "composed"])
        #expect(committed.map { Array($0.id.utf8) } == [Array(decomposed.id.utf8), Array(composed.id.utf8)])
    }

    // MARK: Transient failures

    @Test func diskFullKeepsChangesPendingAndRetriesUntilSpaceIsFreed() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try await openStore(path, entities: pipelineEntities) { configuration in
            configuration.initialRetryDelay = 0.02
            configuration.maximumRetryDelay = 0.1
        }
        var seed = ChangeSet()
        (0..<10).forEach { seed.insert(PipelineItem.make($0)) }
        try await store.submit(seed).committed()
        // Cap the file at its current size: the next page SQLite needs makes it report SQLITE_FULL.
        let pages = try await store.read { db in try db.value("PRAGMA page_count") }
        let pageCount = try #require(pages.flatMap(Int64.fromDatabaseValue))
        _ = try await store.read { db in try db.value("PRAGMA max_page_count = \(pageCount)") }

        let failures = store.failures()
        var big = ChangeSet()
        let bigItems = (100..<400).map { index in
            PipelineItem(id: "big-\(index)", group: 9, score: 0, label: String(repeating: "x", count: 2_000), isDone: false)
        }
        bigItems.forEach { big.insert($0) }
        let submission = try store.submit(big)
        let full = await strataError { try await submission.committed() }
        #expect(full?.code == .diskFull)
        #expect(full?.isTransient == true)
        var iterator = failures.makeAsyncIterator()
        #expect(await iterator.next()?.code == .diskFull)
        // Still pending, and visible to fetches.
        #expect(store.pendingCount == 1)
        #expect(try await store.count(Query<PipelineItem>(where: Attribute("group") == 9)) == bigItems.count)
        #expect(await strataError { try await store.persist() }?.code == .diskFull)

        // Space comes back (here: the cap is lifted on the store's own connection); the retries commit.
        try await store.onQueue { writer in try writer.connection.execute("PRAGMA max_page_count = 1073741823") }
        try await store.persist()
        try await submission.committed()
        #expect(store.pendingCount == 0)
        let reopened = try await openStore(path, entities: pipelineEntities)
        #expect(try await reopened.count(Query<PipelineItem>()) == 10 + bigItems.count)
        #expect(try await reopened.fetch(PipelineItem.self, id: "big-399") == bigItems.last)
    }

    @Test func retriesBackOffExponentially() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let attempts = AttemptClock()
        let store = try await openStore(path, entities: pipelineEntities) { configuration in
            configuration.busyTimeout = 0
            configuration.initialRetryDelay = 0.02
            configuration.maximumRetryDelay = 10
            configuration.statementObserver = attempts.observer
        }
        let other = try await openStore(path, entities: pipelineEntities)
        let gate = QueueGate()
        let holder = Task { try await other.write { _ in gate.hold() } }
        defer { gate.release() }
        try #require(await waitOff(gate.entered))

        let failures = store.failures()
        attempts.clear()  // forget the transaction that opened the store
        var changes = ChangeSet()
        changes.insert(PipelineItem.make(1))
        try store.submit(changes)
        // Wait (bounded) for five failed attempts: the first at once, then after 0.02, 0.04, 0.08, 0.16 s.
        let sawFive = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var count = 0
                for await failure in failures where failure.code == .busy {
                    count += 1
                    if count == 5 { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30 * waitScale))  // a bound, not synchronisation
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        try #require(sawFive, "the store did not retry five times within 30 s")
        let times = attempts.times
        try #require(times.count >= 5)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(times[4] - times[0] >= .milliseconds(290), "retries came too fast for a doubling delay: \(gaps)")
        #expect(gaps[3] >= .milliseconds(155), "the fourth retry must wait 0.16 s: \(gaps)")
        #expect(store.pendingCount == 1)

        gate.release()
        #expect(try await holder.value)
        try await persistAfterLockReleased(store)
        #expect(try await store.fetch(PipelineItem.self, id: PipelineItem.make(1).id) == PipelineItem.make(1))
    }

    // MARK: Bulk operations

    @Test func bulkUpdateOfTenThousandIDsRunsOneStatementPerVariableLimitChunk() async throws {
        let directory = try TemporaryDirectory()
        let log = StatementLog()
        let store = try await openStore(directory.path("store.sqlite"), entities: pipelineEntities, log: log)
        let variableLimit = try await store.onQueue { writer in writer.connection.maxVariableCount }
        var insert = ChangeSet()
        let items = (0..<10_000).map { PipelineItem.make($0) }
        items.forEach { insert.insert($0) }
        try await store.submit(insert).committed()

        func updateStatements() -> [String] {
            log.statements.filter { $0.hasPrefix("UPDATE \"PipelineItem\" SET") }
        }
        func chunks(_ count: Int, leading: Int) -> Int { (count + (variableLimit - leading) - 1) / (variableLimit - leading) }

        log.clear()
        try await store.updateAll(PipelineItem.self, ids: items.map(\.id), set: ["isDone": true]).committed()
        var statements = updateStatements()
        #expect(statements.count == chunks(10_000, leading: 1))
        #expect(statements.allSatisfy { $0.contains("\"id\" IN (") && placeholders($0) <= variableLimit })
        #expect(statements.map(placeholders).reduce(0, +) == 10_000 + statements.count)
        #expect(try await store.count(Query<PipelineItem>(where: Attribute("isDone") == true)) == 10_000)

        // More IDs than one statement may bind: split into chunks, missing IDs ignored.
        let many = items.map(\.id) + (0..<(variableLimit + 5)).map { "missing-\($0)" }
        log.clear()
        try await store.updateAll(PipelineItem.self, ids: many, set: ["group": 7, "label": "bulk"]).committed()
        statements = updateStatements()
        #expect(statements.count == chunks(many.count, leading: 2))
        #expect(statements.count >= 2)
        #expect(statements.allSatisfy { placeholders($0) <= variableLimit })
        #expect(statements.map(placeholders).reduce(0, +) == many.count + 2 * statements.count)
        #expect(try await store.count(Query<PipelineItem>(where: Attribute("group") == 7 && Attribute("label") == "bulk"))
                == 10_000)

        // By filter: one statement, whatever the number of rows.
        log.clear()
        try await store.updateAll(PipelineItem.self, where: Attribute("score") < 100, set: ["isDone": false]).committed()
        statements = updateStatements()
        #expect(statements.count == 1)
        #expect(statements.first?.contains("WHERE") == true)
        #expect(try await store.count(Query<PipelineItem>(where: Attribute("isDone") == false)) == 200)

        // Bulk deletes: by IDs and by filter.
        log.clear()
        try await store.deleteAll(PipelineItem.self, ids: items.prefix(3_000).map(\.id)).committed()
        #expect(log.count { $0.hasPrefix("DELETE FROM \"PipelineItem\" WHERE \"id\" IN (") } == chunks(3_000, leading: 0))
        try await store.deleteAll(PipelineItem.self, where: Attribute("score") >= 4_000).committed()
        #expect(log.count { $0.hasPrefix("DELETE FROM \"PipelineItem\" WHERE") } == chunks(3_000, leading: 0) + 1)
        let remaining = try await store.ids(Query<PipelineItem>())
        #expect(remaining == items[3_000..<8_000].map(\.id))
    }

    @Test func bulkOperationsAreOrderedWithSavesAndVisibleBeforeTheyCommit() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let store = try await openStore(path, entities: pipelineEntities) { configuration in
            configuration.busyTimeout = 0.05
            configuration.initialRetryDelay = 0.02
            configuration.maximumRetryDelay = 0.1
        }
        let other = try await openStore(path, entities: pipelineEntities)
        let gate = QueueGate()
        let holder = Task { try await other.write { _ in gate.hold() } }
        defer { gate.release() }
        try #require(await waitOff(gate.entered))

        var model: [String: PipelineItem] = [:]
        let items = (0..<20).map { PipelineItem.make($0) }
        var insert = ChangeSet()
        items.forEach { insert.insert($0); model[$0.id] = $0 }
        try store.submit(insert)
        // Mark everything read, then put one back: the later upsert wins.
        try store.updateAll(PipelineItem.self, ids: items.map(\.id), set: ["isDone": true])
        for id in model.keys { model[id]?.isDone = true }
        var unread = items[5]
        unread.isDone = false
        unread.label = "back to unread"
        var upsert = ChangeSet()
        upsert.upsert(unread)
        try store.submit(upsert)
        model[unread.id] = unread
        // Then a filter update that sees the upsert's result, and a delete that sees both.
        try store.updateAll(PipelineItem.self, where: Attribute("isDone") == false || Attribute("group") == 1,
                            set: ["label": "touched", "score": -1.0])
        for (id, item) in model where !item.isDone || item.group == 1 {
            model[id]?.label = "touched"
            model[id]?.score = -1
        }
        try store.deleteAll(PipelineItem.self, where: Attribute("group") == 2 && Attribute("isDone") == true)
        for (id, item) in model where item.group == 2 && item.isDone { model[id] = nil }
        // An insert after the delete of its group survives it.
        var late = ChangeSet()
        let lateItem = PipelineItem.make(100, group: 2, done: true)
        late.insert(lateItem)
        try store.submit(late)
        model[lateItem.id] = lateItem
        // A bulk delete by IDs that includes it, then a re-insert.
        try store.deleteAll(PipelineItem.self, ids: [items[0].id, lateItem.id])
        model[items[0].id] = nil
        model[lateItem.id] = nil
        var reinsert = ChangeSet()
        reinsert.insert(items[0])
        try store.submit(reinsert)
        model[items[0].id] = items[0]

        let expected = model.values.sorted { $0.id < $1.id }
        #expect(expected.contains { $0.label == "touched" } && expected.count < 20, "the test's own model went wrong")
        #expect(store.pendingCount == 8)
        #expect(try await store.fetch(Query<PipelineItem>()) == expected)
        let touched = Query<PipelineItem>(where: Attribute("label") == "touched", sortedBy: [Attribute("group").descending])
        let touchedExpected = expected.filter { $0.label == "touched" }
            .sorted { $0.group != $1.group ? $0.group > $1.group : $0.id < $1.id }.map(\.id)
        #expect(try await store.ids(touched) == touchedExpected)

        gate.release()
        #expect(try await holder.value)
        try await persistAfterLockReleased(store)
        #expect(try await store.fetch(Query<PipelineItem>()) == expected)
        #expect(try await store.ids(touched) == touchedExpected)
        let reopened = try await openStore(path, entities: pipelineEntities)
        #expect(try await reopened.fetch(Query<PipelineItem>()) == expected)
    }

    // MARK: Persist, reopen, close

    @Test func persistThenReopenFindsEverythingAndSubmitAfterCloseThrows() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let items = (0..<250).map { PipelineItem.make($0) }
        let contacts = (1...5).map { PipelineContact(id: Int64($0), email: "c\($0)@example.com", name: "Contact \($0)") }
        do {
            let store = try await openStore(path, entities: pipelineEntities)
            for chunk in stride(from: 0, to: items.count, by: 50) {
                var changes = ChangeSet()
                items[chunk..<min(chunk + 50, items.count)].forEach { changes.insert($0) }
                try store.submit(changes)
            }
            var changes = ChangeSet()
            contacts.forEach { changes.upsert($0) }
            try store.submit(changes)
            try await store.persist()
            #expect(store.pendingCount == 0)
            try await store.close()
            var late = ChangeSet()
            late.insert(PipelineItem.make(999))
            let closed = await strataError { try store.submit(late) }
            #expect(closed?.code == .closed)
            #expect(store.pendingCount == 0)
        }
        let reopened = try await openStore(path, entities: pipelineEntities)
        #expect(!reopened.wasCreated)
        #expect(try await reopened.fetch(Query<PipelineItem>()) == items)
        #expect(try await reopened.fetch(Query<PipelineContact>()) == contacts)
        #expect(try await reopened.fetch(PipelineItem.self, id: "item-00999") == nil)
        #expect(try await reopened.integrityProblems().isEmpty)
    }
}
