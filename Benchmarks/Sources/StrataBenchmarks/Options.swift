import Foundation

/// Command-line options.
struct Options: Sendable {
    var quick = false
    var json = false
    var articleCount = 100_000
    var repetitions = 3
    /// Scenario IDs to run (nil: all). Scenarios they depend on are set up untimed.
    var only: Set<String>?
    var directory: String?
    var keepFiles = false
    /// Also write the JSON report to this file (the table still goes to stdout).
    var jsonOutput: String?

    static let scenarios = ["P1", "P2", "P3", "P4", "P4b", "P4c", "P5", "P5f", "P5b", "P6", "P7", "P8", "P8b", "P9", "P10", "M1", "M1f", "H2", "H3", "H4"]

    static let usage = """
        usage: StrataBenchmarks [--quick] [--json] [--size N] [--repetitions N] [--only P1,P5,...] [--dir PATH] [--keep]
          --quick        2,000 articles, 2 repetitions (CI: keeps the benchmarks from rotting)
          --json         print {"scenarios": [...]} on stdout instead of the table
          --size N       number of articles (default 100,000)
          --repetitions  repetitions per scenario (default 3)
          --only         run only these scenarios (IDs: \(scenarios.joined(separator: " ")))
          --dir PATH     where to put the database files (default: a fresh temporary directory)
          --keep         keep the files afterwards
          --json-out F   also write the JSON report to file F
        """

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        var size: Int?, repetitions: Int?
        while let argument = iterator.next() {
            switch argument {
            case "--quick": quick = true
            case "--json": json = true
            case "--size": size = iterator.next().flatMap(Int.init)
            case "--repetitions": repetitions = iterator.next().flatMap(Int.init)
            case "--only":
                // Any case: each ID as the list spells it ("p4b" is P4b), an unknown one as given.
                only = Set((iterator.next() ?? "").split(separator: ",").map { id in
                    Self.scenarios.first { $0.uppercased() == id.uppercased() } ?? String(id)
                })
            case "--dir": directory = iterator.next()
            case "--keep": keepFiles = true
            case "--json-out": jsonOutput = iterator.next()
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default: throw BenchmarkError("unknown argument \(argument)\n\(Self.usage)")
            }
        }
        articleCount = size ?? (quick ? 2_000 : 100_000)
        self.repetitions = max(1, repetitions ?? (quick ? 2 : 3))
        guard articleCount >= 100 else { throw BenchmarkError("--size must be at least 100") }
        if let unknown = only?.subtracting(Self.scenarios).sorted().first {
            throw BenchmarkError("unknown scenario \(unknown) in --only\n\(Self.usage)")
        }
    }
}
