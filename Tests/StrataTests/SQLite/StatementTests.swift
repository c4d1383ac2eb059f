import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A statement binds exactly what it is given: parameters a later use leaves out are NULL again,
/// not the values an earlier use bound; text SQLite reads in place (longer than a small string)
/// is still there when the statement runs and is read back whole.
@Suite struct StatementTests {
    @Test func parametersLeftOutOfALaterBindAreNull() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(path: directory.path("s.sqlite"), options: Connection.Options())
        let statement = try connection.prepare("SELECT ?1, ?2, ?3")
        func row(_ values: [DatabaseValue]) throws -> [DatabaseValue] {
            try statement.bind(values)
            #expect(try statement.step())
            defer { statement.reset() }
            return (0..<3).map(statement.value(at:))
        }
        #expect(try row([.integer(1), .text("two"), .real(3)]) == [.integer(1), .text("two"), .real(3)])
        #expect(try row([.integer(4)]) == [.integer(4), .null, .null])
        #expect(try row([.integer(5), .blob(Data([6])), .text("")]) == [.integer(5), .blob(Data([6])), .text("")])
        #expect(try row([]) == [.null, .null, .null])
    }

    /// Strings made at run time (heap storage only the bound array refers to), long and short,
    /// with NUL and multi-byte characters, inserted row by row through one cached statement whose
    /// arguments are dropped by the caller before each step: every row reads back as bound.
    @Test func textBoundInPlaceIsReadBackWhole() throws {
        var (random, seed) = SeededRandom.forTest("textBoundInPlaceIsReadBackWhole")
        let directory = try TemporaryDirectory()
        let connection = try Connection(path: directory.path("s.sqlite"), options: Connection.Options())
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b TEXT)")
        let pieces = ["x", "é", "\u{0}", "🙂", "long enough text ", "y"]
        func text() -> String { (0..<random.next(12)).map { _ in pieces[random.next(pieces.count)] }.joined() }
        var expected: [[DatabaseValue]] = []
        let insert = try connection.prepare("INSERT INTO t VALUES (?, ?, ?)", cached: false)
        for id in 0..<300 {
            let (a, b) = (text(), text())
            // Copies with storage of their own: once `execute` is called, only the statement's
            // arguments refer to the bound strings' storage.
            expected.append([.integer(Int64(id)), .text(String(decoding: Array(a.utf8), as: UTF8.self)),
                             .text(String(decoding: Array(b.utf8), as: UTF8.self))])
            if id % 2 == 0 {
                try connection.execute("INSERT INTO t VALUES (?, ?, ?)", [.integer(Int64(id)), .text(a), .text(b)])
            } else {
                // Bound from a temporary, stepped after it is gone.
                try insert.bind([.integer(Int64(id)), .text(String(decoding: Array(a.utf8), as: UTF8.self)),
                                 .text(String(decoding: Array(b.utf8), as: UTF8.self))])
                #expect(try !insert.step())
                insert.reset()
            }
        }
        #expect(try connection.rows("SELECT id, a, b FROM t ORDER BY id") == expected, "seed \(seed)")
    }
}
