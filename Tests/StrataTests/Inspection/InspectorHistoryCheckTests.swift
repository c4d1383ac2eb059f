import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `strata check`'s history item: the transactions ordered and apart, every entry above the
/// floor up to the newest transaction in one, consumers between the floor and the newest
/// generation — a file damaged through the `sqlite3` shell fails it, saying what and where.
@Suite struct InspectorHistoryCheckTests {
    /// A closed store whose history is four transactions — generations 1, 2, 3…4 (another
    /// writer's two rows), 5 — and a consumer at 2.
    private func makeStore(_ path: String) async throws {
        let store = try await openStore(path)
        try await seed(store, with: (1...3).map { Feed(id: Int64($0), name: "Feed \($0)") })
        var rename = ChangeSet()
        rename.update(Feed(id: 1, name: "Renamed"))
        try await store.submit(rename).committed()
        try await store.registerHistoryConsumer("sync")
        try await store.write { db in try db.execute("INSERT INTO Feed (id, name) VALUES (4, 'four'), (5, 'five')") }
        try await seed(store, with: [Feed(id: 10, name: "Ten")])
        try await store.close()
    }

    private func history(_ path: String) throws -> CheckReport.Item? {
        try StoreInspector(path: path).check().items.first { $0.name == "history" }
    }

    @Test func aHealthyHistoryPassesAndDamageIsNamed() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        try await makeStore(path)
        #expect(try await ExternalTools.sqlite3(path, "SELECT first, generation FROM strata_transactions ORDER BY generation")
                == ["1|1", "2|2", "3|4", "5|5"], "the layout the damage below assumes")
        let healthy = try StoreInspector(path: path).check()
        #expect(healthy.passed, "\(healthy)")
        #expect(healthy.items.map(\.name) == ["integrity", "foreign keys", "change log", "history", "entity tables", "stored values"])
        #expect(try history(path)?.detail == "4 transactions cover the log through generation 5, 1 consumer within it")

        /// The history item's problems with `damage` applied, then `repair`.
        func problems(_ damage: String, repair: String) async throws -> [String] {
            _ = try await ExternalTools.sqlite3(path, damage)
            let found = try history(path)?.problems ?? ["no history item"]
            _ = try await ExternalTools.sqlite3(path, repair)
            #expect(try history(path)?.problems == [], "repaired after: \(damage)")
            return found
        }
        #expect(try await problems("UPDATE strata_transactions SET first = 2 WHERE generation = 4",
                                   repair: "UPDATE strata_transactions SET first = 3 WHERE generation = 4")
                == ["transaction 4 (generations 2…4) overlaps transaction 2"])
        #expect(try await problems("UPDATE strata_transactions SET first = 6 WHERE generation = 5",
                                   repair: "UPDATE strata_transactions SET first = 5 WHERE generation = 5")
                == ["transaction 5 starts after it ends (first 6)",
                    "1 change-log entry belongs to no transaction (the first is generation 5): the history skips it"])
        #expect(try await problems("DELETE FROM strata_transactions WHERE generation = 4",
                                   repair: "INSERT INTO strata_transactions VALUES (4, 3, NULL, 0, 1)")
                == ["2 change-log entries belong to no transaction (the first is generation 3): the history skips them"])
        #expect(try await problems("INSERT INTO strata_transactions VALUES (9, 6, NULL, 0, 1)",
                                   repair: "DELETE FROM strata_transactions WHERE generation = 9")
                == ["transaction 9 ends after the newest generation 5: the next changes would be taken for its"])
        #expect(try await problems("UPDATE strata_transactions SET origin = 7 WHERE generation = 2",
                                   repair: "UPDATE strata_transactions SET origin = 0 WHERE generation = 2")
                == ["1 transaction has an unknown origin code"])
        #expect(try await problems("UPDATE strata_consumers SET generation = 50",
                                   repair: "UPDATE strata_consumers SET generation = 2")
                == ["consumer sync is at generation 50, past the newest generation 5"])
        #expect(try await problems("DROP TABLE strata_consumers", repair: """
            CREATE TABLE strata_consumers (name TEXT NOT NULL PRIMARY KEY, generation INTEGER NOT NULL);
            INSERT INTO strata_consumers VALUES ('sync', 2);
            """) == ["table strata_consumers is missing, though the store's bookkeeping format is \(StoreInspector.readableFormat)"])
        // Pruned through 1 without its transaction, and a consumer left behind the floor.
        #expect(try await problems("""
            DELETE FROM strata_changes WHERE generation = 1; INSERT INTO strata_meta (key, value) VALUES ('log_floor', 1);
            UPDATE strata_consumers SET generation = 0;
            """, repair: """
            DELETE FROM strata_transactions WHERE generation = 1; UPDATE strata_consumers SET generation = 2;
            """) == ["1 transaction at or below the floor 1 was not pruned",
                     "consumer sync is at generation 0, below the floor 1: what it had not read was pruned"])
        #expect(try StoreInspector(path: path).check().passed)
    }

    /// What other writers committed since a store last looked is in no transaction yet: that is
    /// not damage (the next store to look claims it).
    @Test func entriesAfterTheNewestTransactionAreNotAProblem() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        try await makeStore(path)
        _ = try await ExternalTools.sqlite3(path, "INSERT INTO Feed (id, name) VALUES (20, 'shell')")
        #expect(try await ExternalTools.sqlite3(path, "SELECT max(generation) FROM strata_changes") == ["6"])
        #expect(try history(path)?.problems == [])
    }
}
