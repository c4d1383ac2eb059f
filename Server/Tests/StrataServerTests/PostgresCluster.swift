import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#else
#error("unknown C library")
#endif

/// A real PostgreSQL server for the tests: a new cluster in a temporary directory, listening on a
/// free loopback port (its Unix socket in the same directory), stopped and removed at the end.
///
/// PostgreSQL refuses to run as root: as root, `initdb` and `pg_ctl` run through
/// `runuser -u strata-pg --` (Scripts/setup creates that system user), and the directory
/// belongs to it. The binaries are found in `/usr/lib/postgresql/<version>/bin` (Debian's
/// `postgresql` package, which Scripts/setup installs), else on `PATH`.
final class PostgresCluster: Sendable {
    /// The system user PostgreSQL runs as when the tests run as root.
    static let systemUser = "strata-pg"
    /// The cluster's superuser (trust authentication on loopback only).
    static let superuser = "strata"

    let directory: URL
    let port: Int
    private let binaries: URL

    /// initdb + pg_ctl start. Throws with PostgreSQL's own output when either fails.
    static func start() async throws -> PostgresCluster {
        let binaries = try findBinaries()
        // As root, /tmp rather than $TMPDIR: strata-pg must be able to reach the directory.
        let base = geteuid() == 0 ? URL(fileURLWithPath: "/tmp") : FileManager.default.temporaryDirectory
        let directory = base.appendingPathComponent("strata-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if geteuid() == 0 {
            guard let account = getpwnam(systemUser) else {
                throw ClusterError("running as root, and there is no user \(systemUser) to run PostgreSQL as: run ./Scripts/setup")
            }
            guard chown(directory.path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
                throw ClusterError("chown \(directory.path) to \(systemUser): errno \(errno)")
            }
        }
        let cluster = PostgresCluster(directory: directory, port: try freePort(), binaries: binaries)
        try cluster.run("initdb", ["-D", cluster.dataDirectory, "-U", superuser, "--auth=trust", "-E", "UTF8",
                                   "--no-sync", "--no-instructions"])
        let options = "-p \(cluster.port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off"
            + " -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
        try cluster.run("pg_ctl", ["-D", cluster.dataDirectory, "-o", options, "-l", directory.path + "/server.log",
                                   "-w", "-t", "60", "start"])
        return cluster
    }

    private init(directory: URL, port: Int, binaries: URL) {
        self.directory = directory
        self.port = port
        self.binaries = binaries
    }

    private var dataDirectory: String { directory.path + "/data" }

    /// A URL for `database` on this cluster.
    func url(database: String) -> String { "postgres://\(Self.superuser)@127.0.0.1:\(port)/\(database)" }

    /// pg_ctl stop (fast: the tests' connections are dropped), then the directory goes.
    func stop() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try run("pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "-t", "60", "stop"])
    }

    /// Stops and starts the server (the same port and data): what a test of a database restart uses.
    func restart() throws {
        try run("pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "-t", "60", "restart"])
    }

    /// Runs one of PostgreSQL's programs, as `strata-pg` when we are root, and waits for it.
    /// posix_spawn and waitpid rather than Foundation's Process, whose waitUntilExit can miss
    /// the exit of a child whose own child (the postmaster) lives on.
    private func run(_ program: String, _ arguments: [String]) throws {
        let executable = binaries.appendingPathComponent(program).path
        let command = geteuid() == 0 ? ["/usr/sbin/runuser", "-u", Self.systemUser, "--", executable] + arguments
                                     : [executable] + arguments
        let outputPath = directory.path + "/\(program).out"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var argv = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, command[0], &actions, nil, &argv, environ)
        guard spawned == 0 else { throw ClusterError("posix_spawn \(command[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw ClusterError("waitpid \(program): errno \(errno)") }
        }
        // Exited normally with status 0 (the wait status encodes both).
        guard status == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let log = (try? String(contentsOfFile: directory.path + "/server.log", encoding: .utf8)) ?? ""
            throw ClusterError("\(program) \(arguments.joined(separator: " ")) failed (wait status \(status)):\n\(text)\n\(log)")
        }
    }

    private static func findBinaries() throws -> URL {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = root.appendingPathComponent(version).appendingPathComponent("bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path) { return bin }
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let bin = URL(fileURLWithPath: String(directory))
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path)
                && FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("pg_ctl").path) {
                return bin
            }
        }
        throw ClusterError("no initdb/pg_ctl in /usr/lib/postgresql/*/bin or on PATH: run ./Scripts/setup")
    }

    /// A port nobody listens on now: bind port 0 on loopback and read what the kernel chose.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ClusterError("socket: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw ClusterError("bind to a loopback port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A failure to run the tests' PostgreSQL, with what PostgreSQL printed.
struct ClusterError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
