import Foundation
import Logging
import PostgresNIO
@testable import StrataServer
import Testing

/// The suite trait that runs a suite inside one ``PostgresCluster``: started before the suite's
/// first test, stopped after its last (Swift Testing's `TestScoping`, not recursive, so the
/// nested suites share it). Chosen over a lazily started shared actor because the scope knows
/// when the last test ends; a test reaches the cluster through ``PostgresScope/cluster``.
struct PostgresScope: SuiteTrait, TestScoping {
    @TaskLocal static var cluster: PostgresCluster?

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        let cluster = try await PostgresCluster.start()
        do {
            try await Self.$cluster.withValue(cluster) { try await function() }
        } catch {
            try? cluster.stop()
            throw error
        }
        try cluster.stop()
    }

    /// A new empty database on the suite's cluster, for one test.
    static func makeDatabase() async throws -> PostgresURL {
        guard let cluster else { throw ClusterError("the test is not inside a suite with the .postgres trait") }
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let connection = try await PostgresConnection.connect(
            configuration: try PostgresURL(cluster.url(database: "postgres")).connectionConfiguration,
            id: 0, logger: Logger(label: "test"))
        do {
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Logger(label: "test"))
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        return try PostgresURL(cluster.url(database: name))
    }
}

extension Trait where Self == PostgresScope {
    /// Runs the suite against a real PostgreSQL started for it.
    static var postgres: Self { Self() }
}

/// Every server test, in one suite so that one PostgreSQL cluster serves them all; the test files
/// add nested suites in extensions.
@Suite(.postgres) struct ServerTests {}
