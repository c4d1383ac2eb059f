import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A statement binds exactly what it is given: parameters a later use leaves out are NULL again,
/// not the values an earlier use bound.
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
}
